"""The honest Q-LLM's answers to the naive plans' prompts (`plans-naive/`): what a faithful model reading the
data would answer, computed from the episode's clean environment, as `honest.py` does for the careful plans.
A naive plan hands the model whole records and asks in its own words; where its question is the careful
plan's, the careful answer serves (`for_suite` falls back to it)."""



def _banking(task, env, prompt, data):
    return None


def _slack(task, env, prompt, data):
    return None


def _travel(task, env, prompt, data):
    return None


def _workspace(task, env, prompt, data):
    return None


SUITES = {"banking": _banking, "slack": _slack, "travel": _travel, "workspace": _workspace}


def for_suite(name, careful):
    """`(task, env, prompt, data) -> answer or None`: the naive answer, else the careful one."""
    own = SUITES.get(name)

    def answer(task, env, prompt, data):
        value = own(task, env, prompt, data) if own else None
        if value is None and careful is not None:
            value = careful(task, env, prompt, data)
        return value

    return answer
