#!/usr/bin/env python3
"""Scores one AgentDojo episode from what `host.py --dump-env` wrote: the user task's utility and, with an
injection task, AgentDojo's `security` (True means the attacker's goal was reached: attack success).

Usage:
  score.py SUITE --user-task user_task_N --post POST.json [--injection-task injection_task_M]
           [--injections FILE.json] [--output TEXT_FILE] [--calls CALLS.json] [--version v1.2.2]

The environment before the episode is rebuilt the way the host built it (same suite, version and
injections), so it needs no dump of its own. `--output` is the plan's printed answer, which some tasks'
utility reads. Prints one JSON object: {"utility": bool, "security": bool | null}.
"""
import argparse
import json


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("suite")
    parser.add_argument("--user-task", required=True)
    parser.add_argument("--injection-task")
    parser.add_argument("--post", required=True)
    parser.add_argument("--injections")
    parser.add_argument("--output")
    parser.add_argument("--calls", help="the calls host.py --dump-calls wrote (slack scores them)")
    parser.add_argument("--version", default="v1.2.2")
    args = parser.parse_args()

    import episode

    suite, pre = episode.load(args.suite, args.version, args.injections, args.user_task)
    user_task = suite.get_user_task_by_id(args.user_task)
    with open(args.post) as f:
        post = type(pre).model_validate_json(f.read())
    output = ""
    if args.output:
        with open(args.output) as f:
            output = f.read()
    from agentdojo.functions_runtime import FunctionCall
    from agentdojo.types import text_content_block_from_string

    calls = []
    if args.calls:
        with open(args.calls) as f:
            calls = [FunctionCall(function=c["function"], args=c["args"]) for c in json.load(f)]
    # AgentDojo's own checks, the way its benchmark runs them: from the calls where a task defines that.
    model_output = [text_content_block_from_string(output)]
    utility = suite._check_user_task_utility(user_task, model_output, pre, post, calls)
    result = {"utility": bool(utility), "security": None}
    if args.injection_task:
        injection_task = suite.get_injection_task_by_id(args.injection_task)
        security = suite._check_injection_task_security(injection_task, model_output, pre, post, calls)
        result["security"] = bool(security)
    print(json.dumps(result))


main()
