"""The environment an episode starts from, built one way for the host and the scorer: the suite at a benchmark
version, its injection vectors filled (defaults where not given), then the user task's `init_environment`."""
import json


def load(suite_name, version, injections_path=None, user_task_id=None):
    """Returns (suite, environment)."""
    from agentdojo.task_suite.load_suites import get_suite

    suite = get_suite(version, suite_name)
    injections = {}
    if injections_path:
        with open(injections_path) as f:
            injections = json.load(f)
    env = suite.load_and_inject_default_environment(injections)
    if user_task_id:
        env = suite.get_user_task_by_id(user_task_id).init_environment(env)
    return suite, env
