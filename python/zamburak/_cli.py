"""Runs the `zamburak` binary: one process per call, its JSON document parsed, its exit code mapped. While a
run (or an approved run's continuation) may call Python tools, a [`Host`] serves them and the child learns
where from its environment.

Exit codes (the CLI's): 0 completed, 1 rejected or failed, 2 configuration (raised as
[`ConfigurationError`] with the CLI's message), 3 denied, 4 suspended."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._binary import find_binary
from ._errors import ConfigurationError, ZamburakError
from .host import Host, HostedTool, Session

USAGE = 2


@dataclass
class Completed:
    code: int
    stdout: str
    stderr: str


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment, with this interpreter's directory first on PATH: a policy's server
    `python3 -m zamburak.relay` then runs the interpreter that has this package installed."""
    env = dict(os.environ)
    here = os.path.dirname(sys.executable)
    path = env.get("PATH", os.defpath)
    if here and path.split(os.pathsep)[0] != here:
        env["PATH"] = here + os.pathsep + path
    if extra:
        env.update(extra)
    return env


def _host(tools: list[HostedTool] | None) -> Host | None:
    if not tools:
        return None
    return Host(lambda: Session(tools))


def invoke(args: Sequence[str], tools: list[HostedTool] | None = None, cwd: str | None = None) -> Completed:
    """Runs `zamburak ARGS…` to its end, serving `tools` meanwhile."""
    binary = find_binary()
    host = _host(tools)
    try:
        done = subprocess.run(
            [binary, *args],
            env=child_env(host.env if host else None),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
        )
    finally:
        if host is not None:
            host.close()
    return Completed(done.returncode, done.stdout, done.stderr)


async def ainvoke(args: Sequence[str], tools: list[HostedTool] | None = None, cwd: str | None = None) -> Completed:
    """[`invoke`] without blocking the event loop (tools served from a thread may await work on it)."""
    binary = find_binary()
    host = _host(tools)
    try:
        process = await asyncio.create_subprocess_exec(
            binary,
            *args,
            env=child_env(host.env if host else None),
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await process.communicate()
        except BaseException:
            # Cancelled: the run does not go on behind the caller's back.
            if process.returncode is None:
                process.kill()
                await process.wait()
            raise
    finally:
        if host is not None:
            host.close()
    return Completed(
        process.returncode if process.returncode is not None else -1,
        out.decode(errors="replace"),
        err.decode(errors="replace"),
    )


def error_lines(stderr: str) -> str:
    """The CLI's own error text on stderr: from its first `error: ` line on, up to a line of a tool's or
    server's words (`(shown here only)`), which never goes into an exception."""
    lines = stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("error: ")), None)
    if start is None:
        return ""
    kept = []
    for line in lines[start:]:
        if "(shown here only)" in line:
            break
        kept.append(line)
    return "\n".join(kept)[len("error: "):].strip()


LOCK_HINT = (
    " (for tools served by Python functions, lock from Python instead: zamburak.lock(policy, tools), which "
    "serves them while `zamburak mcp lock` asks)"
)


def _usage(message: str) -> ConfigurationError:
    """A configuration error with the CLI's message; where it says to run `zamburak mcp lock`, how to do that
    for Python tools, which the CLI alone cannot start."""
    if "zamburak mcp lock" in message:
        message += LOCK_HINT
    return ConfigurationError(message, USAGE)


def document(done: Completed, what: str) -> dict[str, Any]:
    """The JSON document a `--format json` command printed; a configuration error (exit 2) raised with the
    CLI's message, anything else unexpected raised too."""
    try:
        doc = json.loads(done.stdout) if done.stdout.strip() else None
    except json.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and "error" in doc and done.code == USAGE:
        raise _usage(str(doc["error"]))
    if done.code == USAGE:
        raise _usage(error_lines(done.stderr) or f"`zamburak {what}` failed (exit 2)")
    if not isinstance(doc, dict):
        said = error_lines(done.stderr)
        raise ZamburakError(
            f"`zamburak {what}` exited with {done.code} and printed no report" + (f": {said}" if said else ""),
            done.code,
        )
    return doc


def text(done: Completed, what: str) -> str:
    """The text a command printed on stdout; exit 2 raised with the CLI's message."""
    if done.code == 0:
        return done.stdout
    message = error_lines(done.stderr) or f"`zamburak {what}` failed (exit {done.code})"
    if done.code == USAGE:
        raise _usage(message)
    raise ZamburakError(message, done.code)
