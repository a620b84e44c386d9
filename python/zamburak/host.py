"""Python callables as MCP tools, for `zamburak run`: the policy names a server started as
`python3 -m zamburak.relay` (`servers:` in docs/mcp.md), the relay connects the server's stdio to a unix socket
this process serves, and each `tools/call` runs a callable here, in your process, with your objects. Zamburak
pins the tools in the policy's lock, checks every call against the policy and labels every result by it,
like any MCP server's.

The pieces stand alone, so a harness can serve its own tools the same way (AgentDojo's host in bench/agentdojo
does): [`HostedTool`] is one tool (its JSON Schemas and a function of its arguments), [`tool_from_callable`]
makes one from a typed Python function, [`Session`] answers one MCP client's JSON-RPC lines, and [`Host`] serves
sessions on a private unix socket named by the environment variable [`SOCKET_ENV`].

Each tool returns its result as structured content `{"result": …}`, with an `outputSchema` whose only
property is `result`: Zamburak hands the plan the value inside. A tool that raises reports `isError`, whose
text Zamburak keeps out of every report and trace (it is the tool's words) and shows on the terminal only.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime as _dt
import enum
import inspect
import json
import os
import shutil
import socket
import tempfile
import threading
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

SOCKET_ENV = "ZAMBURAK_TOOLS_SOCKET"
"""The environment variable the relay reads the socket's path from; name it in the server's `env:`."""

SERVER_ARGS = ["-m", "zamburak.relay"]
"""The relay's arguments after `python3`: the `servers:` entry is `{command: python3, args: [-m, zamburak.relay],
env: [ZAMBURAK_TOOLS_SOCKET]}`."""

PROTOCOL_VERSION = "2025-06-18"


@dataclass
class HostedTool:
    """One tool served to Zamburak: its MCP definition and the function that answers a call."""

    name: str
    description: str
    input_schema: dict[str, Any]
    result_schema: dict[str, Any] | None
    """The JSON Schema of the result (`{}`: any JSON value; `None`: no output schema, the result reaches
    the plan as text)."""
    call: Callable[[dict[str, Any]], Any] = field(repr=False)
    """Called with the arguments by name, on the host's thread; returns the result."""

    def definition(self) -> dict[str, Any]:
        """The tool as `tools/list` lists it (what the lock pins)."""
        doc: dict[str, Any] = {"name": self.name, "description": self.description, "inputSchema": self.input_schema}
        if self.result_schema is not None:
            doc["outputSchema"] = {
                "type": "object",
                "properties": {"result": self.result_schema},
                "required": ["result"],
            }
        return doc


def jsonable(value: Any) -> Any:
    """A tool result as plain JSON: pydantic models dumped in JSON mode, dataclasses as dicts, dates as ISO
    text, tuples and sets as lists."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return jsonable(dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    return str(value)


_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


def schema_of(annotation: Any) -> dict[str, Any]:
    """The JSON Schema of a type annotation: scalars, `list[T]`, `dict[str, T]`, `tuple`, `X | None`,
    `Literal[…]`, `TypedDict`s and `Any` (`{}`). An annotation it cannot describe is `{}` (any value)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    if annotation in _SCALARS:
        return dict(_SCALARS[annotation])
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [schema_of(a) for a in args]}
    if origin in (list, collections.abc.Sequence, set, frozenset) or annotation in (list, set, frozenset):
        return {"type": "array", "items": schema_of(args[0])} if args else {"type": "array"}
    if origin is tuple or annotation is tuple:
        if args and args[-1] is not Ellipsis:
            return {"type": "array", "prefixItems": [schema_of(a) for a in args], "minItems": len(args),
                    "maxItems": len(args)}
        return {"type": "array", "items": schema_of(args[0])} if args else {"type": "array"}
    if origin in (dict, collections.abc.Mapping) or annotation is dict:
        if len(args) == 2:
            return {"type": "object", "additionalProperties": schema_of(args[1])}
        return {"type": "object"}
    if typing.is_typeddict(annotation):
        hints = typing.get_type_hints(annotation)
        required = sorted(getattr(annotation, "__required_keys__", hints.keys()))
        return {
            "type": "object",
            "properties": {k: schema_of(v) for k, v in hints.items()},
            "required": required,
        }
    return {}


def tool_from_callable(name: str, fn: Callable[..., Any]) -> HostedTool:
    """A tool from a typed Python function: its parameters (keyword arguments; those without a default are
    required) and return annotation become the JSON Schemas, its docstring the description."""
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that cannot be resolved: described as any value
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for p in signature.parameters.values():
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if p.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"tool `{name}`: parameter `{p.name}` is positional-only; tools take keyword arguments")
        properties[p.name] = schema_of(hints.get(p.name, p.annotation))
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    result_schema = schema_of(hints.get("return", signature.return_annotation))

    def call(arguments: dict[str, Any]) -> Any:
        return fn(**arguments)

    return HostedTool(
        name=name,
        description=inspect.getdoc(fn) or "",
        input_schema=input_schema,
        result_schema=result_schema,
        call=call,
    )


def hosted(tools: Mapping[str, Callable[..., Any] | HostedTool]) -> list[HostedTool]:
    """Tools by name, each a callable or a ready [`HostedTool`]."""
    out = []
    for name, tool in tools.items():
        if isinstance(tool, HostedTool):
            out.append(tool if tool.name == name else dataclasses.replace(tool, name=name))
        elif callable(tool):
            out.append(tool_from_callable(name, tool))
        else:
            raise TypeError(f"tool `{name}` is neither a callable nor a HostedTool")
    return out


class Session:
    """Answers one MCP client's JSON-RPC messages (one per line) with `tools`; records each call it got."""

    def __init__(self, tools: list[HostedTool], server_name: str = "zamburak-python") -> None:
        self.tools = {t.name: t for t in tools}
        self.server_name = server_name
        self.calls: list[dict[str, Any]] = []

    def handle(self, line: str | bytes) -> dict[str, Any] | None:
        """The reply to one line, or None (a notification, or junk)."""
        try:
            message = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(message, dict):
            return None
        method = message.get("method")
        request_id = message.get("id")
        if method == "initialize":
            return _reply(request_id, {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": self.server_name, "version": "1"},
            })
        if method == "tools/list":
            return _reply(request_id, {"tools": [t.definition() for t in self.tools.values()]})
        if method == "tools/call":
            params = message.get("params") or {}
            name = params.get("name", "")
            arguments = params.get("arguments") or {}
            self.calls.append({"name": name, "arguments": arguments})
            tool = self.tools.get(name)
            if tool is None:
                return _tool_error(request_id, f"no tool named {name!r}")
            try:
                value = jsonable(tool.call(arguments))
            except Exception as e:  # the tool's own failure: reported as its words, which Zamburak redacts
                return _tool_error(request_id, f"{type(e).__name__}: {e}")
            try:
                text = json.dumps(value, allow_nan=False)
            except ValueError:  # NaN or an infinity: no JSON number says it, so the call fails at once
                return _tool_error(
                    request_id, f"tool {name!r} returned NaN or an infinity, which is not a JSON number")
            result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
            if tool.result_schema is not None:
                result["structuredContent"] = {"result": value}
            return _reply(request_id, result)
        if method == "ping":
            return _reply(request_id, {})
        if request_id is not None and method is not None:
            return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "method not found"}}
        return None


def _line(reply: dict[str, Any]) -> str:
    """A reply as one line of strict JSON. A reply that is not (NaN in a request id or a tool's schema) is
    replaced by a JSON-RPC error, so the client never gets a line it cannot read."""
    try:
        return json.dumps(reply, allow_nan=False)
    except ValueError:
        return json.dumps({"jsonrpc": "2.0", "id": None, "error": {
            "code": -32603, "message": "the reply holds NaN or an infinity, which is not JSON"}})


def _reply(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _tool_error(request_id: Any, text: str) -> dict[str, Any]:
    return _reply(request_id, {"content": [{"type": "text", "text": text}], "isError": True})


class Host:
    """Serves MCP sessions on a unix socket in a new private directory (mode 0700, so no other user can
    connect), one thread per connection, each with a fresh [`Session`] from `new_session`. Use it as a
    context manager; `env` is what the `zamburak` process needs to find it."""

    def __init__(self, new_session: Callable[[], Session]) -> None:
        self.new_session = new_session
        self.sessions: list[Session] = []
        self._dir = tempfile.mkdtemp(prefix="zamburak-host-")
        self.path = os.path.join(self._dir, "tools.sock")
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(self.path)
        self._sock.listen(8)
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="zamburak-host", daemon=True)
        self._thread.start()

    @property
    def env(self) -> dict[str, str]:
        return {SOCKET_ENV: self.path}

    @property
    def calls(self) -> list[dict[str, Any]]:
        """Every call any session got, in order of sessions."""
        return [c for s in self.sessions for c in s.calls]

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), name="zamburak-host-session", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        session = self.new_session()
        self.sessions.append(session)
        try:
            with conn, conn.makefile("rb") as reader:
                for line in reader:
                    reply = session.handle(line)
                    if reply is not None:
                        conn.sendall((_line(reply) + "\n").encode())
        except OSError:
            pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
