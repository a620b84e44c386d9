"""The MCP side of the episode host: one AgentDojo suite's tools, with JSON Schemas derived from the suite's
functions, answering JSON-RPC lines against an environment. Used by `host.py` (stdio, one episode per
process) and by `runner.py` (a unix socket per suite, one connection per episode).

Each tool returns its result as structured content `{"result": …}` with an `outputSchema` whose only property
is `result`, the form the MCP Python SDK uses; Zamburak hands the plan the value inside. A tool that raises
reports `isError`."""
import datetime as _dt
import json
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


class Session:
    """Answers one client's JSON-RPC messages for `suite` against `env` (mutated by the tools' side effects)."""

    def __init__(self, suite_name, version, suite, tools, env):
        from agentdojo.functions_runtime import FunctionsRuntime

        self.suite_name = suite_name
        self.version = version
        self.tools = tools
        self.env = env
        self.runtime = FunctionsRuntime(suite.tools)
        self.calls = []

    def handle(self, line):
        """The reply to one line, or None (a notification or junk)."""
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(message, dict):
            return None
        method = message.get("method")
        request_id = message.get("id")
        if method == "initialize":
            return {"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": f"agentdojo-{self.suite_name}", "version": f"0.1.35/{self.version}"}}}
        if method == "tools/list":
            return {"jsonrpc": "2.0", "id": request_id, "result": {"tools": self.tools}}
        if method == "tools/call":
            params = message.get("params") or {}
            name = params.get("name", "")
            arguments = params.get("arguments") or {}
            self.calls.append({"function": name, "args": arguments})
            result, error = self.runtime.run_function(self.env, name, arguments)
            if error:
                return {"jsonrpc": "2.0", "id": request_id, "result": {
                    "content": [{"type": "text", "text": str(error)}], "isError": True}}
            value = jsonable(result)
            return {"jsonrpc": "2.0", "id": request_id, "result": {
                "content": [{"type": "text", "text": json.dumps(value)}],
                "structuredContent": {"result": value}}}
        if method == "ping":
            return {"jsonrpc": "2.0", "id": request_id, "result": {}}
        if request_id is not None and method is not None:
            return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "method not found"}}
        return None
