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

Each tool returns its result as structured content `{"result": …}` (MCP structured content is an object),
with an `outputSchema` derived from the function's return type. A tool that raises reports `isError`.
The clock of the suite's email and drive clients is pinned, so episodes are reproducible.

This speaks the MCP JSON-RPC messages it needs directly (initialize, tools/list, tools/call, ping); it
imports only agentdojo (pinned in requirements.txt), which takes a few seconds to load.
"""
import argparse
import datetime as _dt
import json
import sys
import types


def pin_clock():
    """AgentDojo's email and drive clients stamp `datetime.now()`; pin it (freezegun breaks pydantic here)."""
    import agentdojo.default_suites.v1.tools.cloud_drive_client as cloud_drive_client
    import agentdojo.default_suites.v1.tools.email_client as email_client

    class Pinned(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return _dt.datetime(2024, 5, 15, 10, 0)

    shim = types.SimpleNamespace(**{k: getattr(_dt, k) for k in dir(_dt) if not k.startswith("__")})
    shim.datetime = Pinned
    email_client.datetime = shim
    cloud_drive_client.datetime = shim


def jsonable(value):
    """A tool result as plain JSON (pydantic models dumped in JSON mode)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    return str(value)


def tool_definitions(suite):
    from pydantic import TypeAdapter

    tools = []
    for f in suite.tools:
        input_schema = f.parameters.model_json_schema()
        input_schema.pop("title", None)
        definition = {"name": f.name, "description": f.description, "inputSchema": input_schema}
        try:
            result_schema = TypeAdapter(f.return_type).json_schema() if f.return_type is not None else {}
            definition["outputSchema"] = {
                "type": "object",
                "properties": {"result": result_schema},
                "required": ["result"],
            }
        except Exception:  # a return type pydantic cannot describe: no output schema, results unchecked
            pass
        tools.append(definition)
    return tools


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("suite")
    parser.add_argument("--version", default="v1.2.2")
    parser.add_argument("--user-task")
    parser.add_argument("--injections")
    parser.add_argument("--dump-env")
    args = parser.parse_args()

    from agentdojo.functions_runtime import FunctionsRuntime

    import episode

    pin_clock()
    suite, env = episode.load(args.suite, args.version, args.injections, args.user_task)
    runtime = FunctionsRuntime(suite.tools)
    tools = tool_definitions(suite)

    def send(message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        method = message.get("method")
        request_id = message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": f"agentdojo-{args.suite}", "version": f"0.1.35/{args.version}"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}})
        elif method == "tools/call":
            params = message.get("params") or {}
            result, error = runtime.run_function(env, params.get("name", ""), params.get("arguments") or {})
            if error:
                send({"jsonrpc": "2.0", "id": request_id, "result": {
                    "content": [{"type": "text", "text": str(error)}], "isError": True}})
            else:
                value = jsonable(result)
                send({"jsonrpc": "2.0", "id": request_id, "result": {
                    "content": [{"type": "text", "text": json.dumps(value)}],
                    "structuredContent": {"result": value}}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif request_id is not None and method is not None:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "method not found"}})

    if args.dump_env:
        with open(args.dump_env, "w") as f:
            f.write(env.model_dump_json())


main()
