"""The API: each function builds the `zamburak` command line, runs it (serving Python tools meanwhile) and
returns the typed view of the document it printed. `run`, `approve` and `reject` have `a`-prefixed async
forms that keep the event loop free while the run waits on tools."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Union

from . import _cli
from ._errors import ConfigurationError
from ._types import Diagnostic, Result
from .host import HostedTool, hosted

PathLike = Union[str, "os.PathLike[str]"]
Tools = Mapping[str, Union[Callable[..., Any], HostedTool]]
Mode = Literal["strict", "normal"]

POLICY_FILE_NAME = "zamburak.yaml"


def find_policy(policy: PathLike | None) -> str:
    """`policy` as an absolute path; `None`: the nearest `zamburak.yaml` from the current directory up (as
    `zamburak stubs` finds one). Without either, a `ConfigurationError`: the API never falls back to the
    built-in default, whose data paths belong to the repository's examples."""
    if policy is not None:
        return os.path.abspath(os.fspath(policy))
    here = Path.cwd()
    for directory in (here, *here.parents):
        candidate = directory / POLICY_FILE_NAME
        if candidate.is_file():
            return str(candidate)
    raise ConfigurationError(
        f"no policy: pass policy=PATH, or put a {POLICY_FILE_NAME} in the current directory or one of its parents",
        _cli.USAGE,
    )


def stubs(policy: PathLike | None = None, *, format: Literal["markdown", "pyi", "json"] = "markdown") -> str:
    """What a planner model is given for the policy (`zamburak stubs`): typed stubs of its tools and
    verifiers, what each argument requires, the Python subset and example plans. A policy with MCP tools,
    Python tools included, needs its lock ([`lock`])."""
    done = _cli.invoke(["stubs", "--policy", find_policy(policy), "--format", format])
    return _cli.text(done, "stubs")


async def astubs(policy: PathLike | None = None, *, format: Literal["markdown", "pyi", "json"] = "markdown") -> str:
    """[`stubs`] for async code."""
    done = await _cli.ainvoke(["stubs", "--policy", find_policy(policy), "--format", format])
    return _cli.text(done, "stubs")


def _lint_args(path: str, policy: PathLike | None, mode: Mode | None) -> list[str]:
    args = ["lint", path, "--policy", find_policy(policy), "--format", "json"]
    if mode:
        args += ["--mode", mode]
    return args


def _write_plan(directory: str, plan: str) -> str:
    path = os.path.join(directory, "plan.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(plan)
    return path


def lint(plan: str, policy: PathLike | None = None, *, mode: Mode | None = None) -> list[Diagnostic]:
    """Checks a plan without running it (`zamburak lint --format json`): every finding, in lint's order.
    Nothing runs and no tool is called."""
    with tempfile.TemporaryDirectory(prefix="zamburak-lint-") as d:
        doc = _cli.document(_cli.invoke(_lint_args(_write_plan(d, plan), policy, mode)), "lint")
    return [Diagnostic.from_json(d) for d in doc.get("diagnostics", [])]


async def alint(plan: str, policy: PathLike | None = None, *, mode: Mode | None = None) -> list[Diagnostic]:
    """[`lint`] for async code."""
    with tempfile.TemporaryDirectory(prefix="zamburak-lint-") as d:
        doc = _cli.document(await _cli.ainvoke(_lint_args(_write_plan(d, plan), policy, mode)), "lint")
    return [Diagnostic.from_json(d) for d in doc.get("diagnostics", [])]


def lock(policy: PathLike | None = None, tools: Tools | None = None) -> str:
    """Pins the policy's MCP tools in its lock (`zamburak mcp lock`), serving `tools` (Python callables by
    name) for the server the policy starts as `python3 -m zamburak.relay`. Lock again after you change a
    tool's name, docstring or signature: a run refuses tools that no longer match their pins. Returns what
    the CLI said."""
    done = _cli.invoke(["mcp", "lock", "--policy", find_policy(policy)], hosted(tools or {}))
    return (_cli.text(done, "mcp lock") + done.stderr).strip()


async def alock(policy: PathLike | None = None, tools: list[HostedTool] | Tools | None = None) -> str:
    """[`lock`] for async code."""
    served = tools if isinstance(tools, list) else hosted(tools or {})
    done = await _cli.ainvoke(["mcp", "lock", "--policy", find_policy(policy)], served)
    return (_cli.text(done, "mcp lock") + done.stderr).strip()


def lock_path(policy: PathLike) -> str:
    """Where the lock of `policy` lives: beside it, `zamburak.yaml` → `zamburak.mcp.lock`."""
    return str(Path(os.fspath(policy)).with_suffix(".mcp.lock"))


def _run_args(
    plan: str, policy: PathLike | None, trace: PathLike | None, runs: PathLike | None, mode: Mode | None,
    approval_ttl: int | None,
) -> list[str]:
    """Writes the plan into a new run directory (the snapshot of a suspended run is bound to that file) and
    returns the command line."""
    policy_path = find_policy(policy)
    if runs is not None:
        os.makedirs(runs, mode=0o700, exist_ok=True)
    run_dir = tempfile.mkdtemp(prefix="zamburak-run-", dir=None if runs is None else os.fspath(runs))
    plan_path = _write_plan(run_dir, plan)
    args = ["run", plan_path, "--policy", policy_path, "--format", "json"]
    if trace is not None:
        args += ["--trace", os.path.abspath(os.fspath(trace))]
    if mode:
        args += ["--mode", mode]
    if approval_ttl is not None:
        args += ["--approval-ttl", str(approval_ttl)]
    return args


def run(
    plan: str,
    policy: PathLike | None = None,
    tools: Tools | None = None,
    trace: PathLike | None = None,
    *,
    runs: PathLike | None = None,
    mode: Mode | None = None,
    approval_ttl: int | None = None,
) -> Result:
    """Runs a plan under the policy (`zamburak run --format json`), with `tools` (Python callables by name)
    serving the policy's Python tools. A denial, an error or a suspension is a [`Result`], not an
    exception; a policy, lock or setup problem raises [`ConfigurationError`].

    The plan is kept in a new directory under `runs` (default: the system's temporary directory), with its
    trace beside it unless `trace` says where: a suspended run's snapshot needs both until it is decided."""
    args = _run_args(plan, policy, trace, runs, mode, approval_ttl)
    done = _cli.invoke(args, hosted(tools or {}))
    return Result.from_json(_cli.document(done, "run"), done.stderr)


async def arun(
    plan: str,
    policy: PathLike | None = None,
    tools: list[HostedTool] | Tools | None = None,
    trace: PathLike | None = None,
    *,
    runs: PathLike | None = None,
    mode: Mode | None = None,
    approval_ttl: int | None = None,
) -> Result:
    """[`run`] for async code: the event loop stays free while the run waits on tools."""
    args = _run_args(plan, policy, trace, runs, mode, approval_ttl)
    served = tools if isinstance(tools, list) else hosted(tools or {})
    done = await _cli.ainvoke(args, served)
    return Result.from_json(_cli.document(done, "run"), done.stderr)


def _decide_args(verb: str, snapshot: PathLike, claim: str | None, by: str | None) -> list[str]:
    args = [verb, os.path.abspath(os.fspath(snapshot)), "--format", "json"]
    if claim is not None:
        args += ["--claim", claim]
    if by is not None:
        args += ["--by", by]
    return args


def approve(snapshot: PathLike, claim: str, by: str | None = None, tools: Tools | None = None) -> Result:
    """Approves the claim a suspended run waits on and continues the run (`zamburak approve --format
    json`): `claim` is the code the person read ([`Claim.code`]), so a different claim is never approved.
    `by` is recorded in the trace (default: `$USER`). The continued run may call `tools` again."""
    done = _cli.invoke(_decide_args("approve", snapshot, claim, by), hosted(tools or {}))
    return Result.from_json(_cli.document(done, "approve"), done.stderr)


async def aapprove(
    snapshot: PathLike, claim: str, by: str | None = None, tools: list[HostedTool] | Tools | None = None
) -> Result:
    """[`approve`] for async code."""
    served = tools if isinstance(tools, list) else hosted(tools or {})
    done = await _cli.ainvoke(_decide_args("approve", snapshot, claim, by), served)
    return Result.from_json(_cli.document(done, "approve"), done.stderr)


def reject(snapshot: PathLike, claim: str | None = None, by: str | None = None) -> Result:
    """Rejects the claim a suspended run waits on: the call never happens and the run stops (`zamburak
    reject --format json`). With `claim`, refuses when the snapshot holds another claim."""
    done = _cli.invoke(_decide_args("reject", snapshot, claim, by))
    return Result.from_json(_cli.document(done, "reject"), done.stderr)


async def areject(snapshot: PathLike, claim: str | None = None, by: str | None = None) -> Result:
    """[`reject`] for async code."""
    done = await _cli.ainvoke(_decide_args("reject", snapshot, claim, by))
    return Result.from_json(_cli.document(done, "reject"), done.stderr)
