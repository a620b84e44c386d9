#!/usr/bin/env python3
"""One AgentDojo suite as an MCP server over stdio, for one episode: the suite's tools, with their JSON
Schemas, run against the suite's environment (optionally with injections), so `zamburak run` can call them
under a locked policy like any user's MCP server.

Usage:
  host.py SUITE [--version v1.2.2] [--user-task user_task_N] [--injections FILE.json] [--dump-env FILE.json]

--user-task   the episode's user task, whose `init_environment` runs first (as AgentDojo does)
--injections  a JSON object {vector_id: text} filled into the environment (the default texts otherwise)
--dump-env    where to write the environment as JSON when the client closes stdin (for scoring utility and
              security afterwards)
--dump-calls  where to write the calls the client made, as JSON, at the same time (some suites score them)

Each tool returns its result as structured content `{"result": …}` (MCP structured content is an object),
with an `outputSchema` derived from the function's return type. A tool that raises reports `isError`.
The clock of the suite's email and drive clients is pinned, so episodes are reproducible.

The MCP messages are answered by `mcp_serve.py`, shared with `runner.py`; this imports agentdojo (pinned in
requirements.txt), which takes a few seconds to load, so the runner serves many episodes from one process.
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("suite")
    parser.add_argument("--version", default="v1.2.2")
    parser.add_argument("--user-task")
    parser.add_argument("--injections")
    parser.add_argument("--dump-env")
    parser.add_argument("--dump-calls")
    args = parser.parse_args()

    import episode
    import mcp_serve

    mcp_serve.pin_clock()
    suite, env = episode.load(args.suite, args.version, args.injections, args.user_task)
    session = mcp_serve.Session(args.suite, args.version, suite, mcp_serve.tool_definitions(suite), env)
    for line in sys.stdin:
        reply = session.handle(line)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()

    if args.dump_env:
        with open(args.dump_env, "w") as f:
            f.write(env.model_dump_json())
    if args.dump_calls:
        with open(args.dump_calls, "w") as f:
            json.dump(session.calls, f)


main()
