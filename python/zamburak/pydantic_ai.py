"""Zamburak as a PydanticAI agent's code mode: `ZamburakCodeMode(policy=…)` replaces the agent's function
tools with one tool, `run_plan(plan)`, whose description is the policy's stubs (`zamburak stubs`). The model
writes a plan; Zamburak lints it, runs it under the policy, and each tool call the plan makes (and the
policy allows) goes to the agent's own tool, through PydanticAI's tool manager (validation, hooks and spans
as for a direct call).

* A plan with lint errors goes back to the model as a retry (`ModelRetry`) with lint's messages and help.
* A call the policy wants confirmed becomes PydanticAI's deferred-tool approval: the agent run ends with
  `DeferredToolRequests`, whose `metadata[tool_call_id]` holds the claim (`text` as a person reads it, the
  values, the claim code). Resume with `DeferredToolResults(approvals={id: True})`: Zamburak approves exactly
  that claim and the run continues; `False` (or `ToolDenied`) rejects it, and the call never happens.
* What the model is told about a run is what `zamburak mcp serve` tells a planner (docs/semantics.md, "What
  the planner and the person are told"): decisions, where a plan stopped, and printed text only when the
  planner may read it; untrusted output is withheld from it. The person's view (the claim, the log, the
  trace) is in the tool return's `metadata`, which PydanticAI never sends to the model.
* The model's plans run in strict mode, whatever the policy's `mode:` says (docs/semantics.md, "Control
  context and modes": §1's guarantee is strict's).

The policy serves the agent's tools as the tools of a server started as `python3 -m zamburak.relay`
(`zamburak.host`), which PydanticAI's own tools answer:

```yaml
servers:
  agent:
    command: python3
    args: ["-m", "zamburak.relay"]
    env: [ZAMBURAK_TOOLS_SOCKET]
tools:
  read_inbox: { source: mcp.agent.read_inbox, effect: read, args: {}, returns: { integrity: untrusted } }
```

Why not pydantic-ai-harness's `CodeMode`: its toolset runs code in pydantic-monty (Monty 1.x) and has no
seam for another executor (`_execute_code` is private and drives Monty's REPL and type checker; the only
pluggable part, `monty_sandbox`, speaks Monty 1.x's worker protocol one suspension at a time, with no plan to
lint first). This capability is built on the same public pieces of pydantic-ai that `CodeMode` uses: a
wrapper toolset, and a nested `ToolManager` for the sandboxed calls.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from pydantic_ai import AbstractToolset, RunContext, ToolDefinition, WrapperToolset
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, UserError
from pydantic_ai.messages import ModelRequest, ToolCallPart, ToolReturn, ToolReturnPart
from pydantic_ai.tool_manager import ToolManager
from pydantic_ai.tools import AgentDepsT, ToolDenied
from pydantic_ai.toolsets.abstract import SchemaValidatorProt, ToolsetTool

from . import _api
from ._types import Diagnostic, Result
from .host import HostedTool, jsonable

RUN_PLAN = "run_plan"

_PREFACE = (
    "Run a plan that does the whole task: one Python program in Zamburak's subset, calling the tools below "
    "as plain functions with keyword arguments (no `await`). You are told each call's decision and what the "
    "plan printed when you may read it; a call that needs the person's approval waits for them.\n\n"
)


class _RunPlanArgs(TypedDict):
    plan: str
    """The plan: Python in Zamburak's subset."""


_ARGS = TypeAdapter(_RunPlanArgs)
_ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"plan": {"type": "string", "description": "The plan: Python in Zamburak's subset."}},
    "required": ["plan"],
    "additionalProperties": False,
}
_ARGS_VALIDATOR: SchemaValidatorProt = _ARGS.validator  # type: ignore[assignment]


@dataclass
class _Pending:
    """A run that waits on the person: the plan it ran, its snapshot and the claim they were shown."""

    plan: str
    snapshot: str
    claim: str


@dataclass(kw_only=True)
class _RunPlanTool(ToolsetTool[AgentDepsT]):
    """`run_plan`, with the agent's tools it serves to plans (computed in `get_tools`)."""

    served: dict[str, ToolsetTool[AgentDepsT]]


def render_diagnostics(diagnostics: Sequence[Diagnostic]) -> str:
    """Lint's errors as the model reads them in a retry: one block per finding, with lint's help."""
    blocks = [f"line {d}" for d in diagnostics]
    return "The plan was not run: lint found errors. Fix them and call run_plan again.\n\n" + "\n\n".join(blocks)


@dataclass
class ZamburakCodeMode(AbstractCapability[AgentDepsT]):
    """A capability that runs the model's plans under a Zamburak policy in place of the agent's tools.

    ```python
    agent = Agent(model, capabilities=[ZamburakCodeMode(policy="zamburak.yaml")])
    ```
    """

    policy: str | os.PathLike[str] | None = None
    """The policy (default: the nearest `zamburak.yaml` from the current directory up)."""

    runs: str | os.PathLike[str] | None = None
    """Where each run's plan, trace and snapshot are kept (default: the system's temporary directory)."""

    approver: str | None = None
    """Who approves in the trace when the app does not say (`DeferredToolResults.metadata[id]["by"]`);
    default `$USER`."""

    max_retries: int = 3
    """How many times the model may retry `run_plan` (lint errors count)."""

    pin_missing_lock: bool = False
    """When the policy has no MCP lock yet, pin the agent's tools as they are now (trust on first use), as
    `zamburak.lock` would. Off by default: without a lock the run fails with the CLI's message."""

    _pending: dict[str, _Pending] = field(default_factory=dict, init=False, repr=False)
    _stubs: dict[tuple[Any, ...], str] = field(default_factory=dict, init=False, repr=False)

    def get_wrapper_toolset(self, toolset: AbstractToolset[AgentDepsT]) -> AbstractToolset[AgentDepsT] | None:
        return ZamburakToolset(wrapped=toolset, capability=self)

    async def before_model_request(self, ctx: RunContext[AgentDepsT], request_context: Any) -> Any:
        """Closes each run whose claim the person denied (PydanticAI answers a denied call without calling
        the tool): the trace records the rejection, and nothing more of the plan runs."""
        for message in ctx.messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if (
                    isinstance(part, ToolReturnPart)
                    and part.tool_name == RUN_PLAN
                    and part.outcome == "denied"
                    and part.tool_call_id in self._pending
                ):
                    pending = self._pending.pop(part.tool_call_id)
                    await _api.areject(pending.snapshot, claim=pending.claim, by=self.approver)
        return request_context

    def policy_path(self) -> str:
        return _api.find_policy(self.policy)

    async def stubs_for(self, served: list[HostedTool]) -> str:
        """The policy's stubs (cached until the policy or its lock changes); pins the tools first when the
        lock is missing and `pin_missing_lock` says so."""
        policy = self.policy_path()
        lock = _api.lock_path(policy)
        if self.pin_missing_lock and not os.path.exists(lock):
            await _api.alock(policy, served)
        key = (policy, _mtime(policy), _mtime(lock))
        if key not in self._stubs:
            self._stubs = {key: await _api.astubs(policy)}
        return self._stubs[key]


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


@dataclass
class ZamburakToolset(WrapperToolset[AgentDepsT]):
    """The toolset `ZamburakCodeMode` puts in place of the agent's: `run_plan` and the agent's output tools
    (which end the run, so they stay the model's). Function tools are served to plans only; tools of other
    kinds (external, unapproved) are neither shown nor served."""

    capability: ZamburakCodeMode[AgentDepsT] = field(kw_only=True)

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        wrapped = await self.wrapped.get_tools(ctx)
        if RUN_PLAN in wrapped:
            raise UserError(f"the tool name {RUN_PLAN!r} is ZamburakCodeMode's: rename your tool")
        served = {n: t for n, t in wrapped.items() if t.tool_def.kind == "function"}
        native = {n: t for n, t in wrapped.items() if t.tool_def.kind == "output"}
        stubs = await self.capability.stubs_for(_hosted(served, ctx, None, None))
        tools: dict[str, ToolsetTool[AgentDepsT]] = dict(native)
        tools[RUN_PLAN] = _RunPlanTool(
            toolset=self,
            tool_def=ToolDefinition(
                name=RUN_PLAN,
                description=_PREFACE + stubs,
                parameters_json_schema=_ARGS_SCHEMA,
                sequential=True,
                metadata={"code_arg_name": "plan", "code_arg_language": "python"},
            ),
            max_retries=self.capability.max_retries,
            args_validator=_ARGS_VALIDATOR,
            served=served,
        )
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        if not isinstance(tool, _RunPlanTool):
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        cap = self.capability
        plan: str = tool_args["plan"]
        parent = ctx.tool_manager
        if parent is None:
            raise UserError("ZamburakCodeMode needs the run's tool manager")
        # The plan's calls go through PydanticAI like direct calls: validation, capability hooks, spans.
        manager = ToolManager(toolset=self.wrapped, root_capability=parent.root_capability, ctx=ctx, tools=tool.served)
        served = _hosted(tool.served, ctx, manager, asyncio.get_running_loop())
        call_id = ctx.tool_call_id or ""
        if ctx.tool_call_approved:
            pending = _approved_claim(cap, ctx, plan)
            by = _by(ctx.tool_call_metadata) or cap.approver
            result = await _api.aapprove(pending.snapshot, claim=pending.claim, by=by, tools=served)
            cap._pending.pop(call_id, None)
        else:
            # The model is the planner: its plans run in strict mode whatever the policy's `mode:` says, since
            # §1's guarantee is strict's (docs/semantics.md, "Control context and modes").
            lint = await _api.alint(plan, cap.policy_path(), mode="strict")
            errors = [d for d in lint if d.severity == "error"]
            if errors:
                raise ModelRetry(render_diagnostics(errors))
            result = await _api.arun(plan, cap.policy_path(), tools=served, runs=cap.runs, mode="strict")
        return _answer(cap, call_id, plan, result)


def _by(metadata: Any) -> str | None:
    by = metadata.get("by") if isinstance(metadata, dict) else None
    return by if isinstance(by, str) else None


def _approved_claim(cap: ZamburakCodeMode[Any], ctx: RunContext[Any], plan: str) -> _Pending:
    """The claim an approval of this `run_plan` call is for: the one this capability showed for the call id
    (or, after a restart, the one the app hands back in `DeferredToolResults.metadata`). The claim code binds
    the approval to the values the person was shown."""
    pending = cap._pending.get(ctx.tool_call_id or "")
    meta = ctx.tool_call_metadata
    if pending is None and isinstance(meta, dict) and isinstance(meta.get("snapshot"), str):
        pending = _Pending(plan=plan, snapshot=meta["snapshot"], claim=str(meta.get("claim", "")))
    if pending is None or pending.plan != plan:
        raise UserError("this run_plan call was approved, but no claim of it is waiting (or its plan changed)")
    return pending


def _answer(cap: ZamburakCodeMode[Any], call_id: str, plan: str, result: Result) -> Any:
    """What the model gets for a finished run; an approval request for a suspended one."""
    if result.status == "suspended" and result.claim is not None and result.snapshot is not None:
        cap._pending[call_id] = _Pending(plan=plan, snapshot=result.snapshot, claim=result.claim.code)
        raise ApprovalRequired(
            metadata={
                "claim": result.claim.code,
                "tool": result.claim.tool,
                "line": result.claim.line,
                "text": result.claim.text,
                "values": result.claim.values,
                "snapshot": result.snapshot,
                "trace": result.trace,
            }
        )
    if result.status == "rejected":
        diagnostics = [Diagnostic.from_json(_diagnostic(d)) for d in result.diagnostics]
        raise ModelRetry(render_diagnostics(diagnostics))
    return ToolReturn(
        return_value=result.planner,
        metadata={
            "status": result.status,
            "trace": result.trace,
            "head": result.trace_head,
            "log": result.log,
        },
    )


def _diagnostic(doc: dict[str, Any]) -> dict[str, Any]:
    """A run's diagnostic (`run --format json`) in lint's shape."""
    return {"severity": "error", **doc}


def _hosted(
    tools: dict[str, ToolsetTool[Any]],
    ctx: RunContext[Any],
    manager: ToolManager[Any] | None,
    loop: asyncio.AbstractEventLoop | None,
) -> list[HostedTool]:
    """The agent's function tools as hosted tools: their PydanticAI definitions are what the lock pins, and
    a call runs through `manager` on the agent's event loop, in the run's context (without them, the tools
    are only described, for the lock and the stubs)."""
    context = contextvars.copy_context()
    counter = iter(range(1, 1 << 62))
    parent_id = ctx.tool_call_id or "run_plan"

    def dispatcher(name: str) -> Callable[[dict[str, Any]], Any]:
        def call(arguments: dict[str, Any]) -> Any:
            if manager is None or loop is None:
                raise RuntimeError("this tool is only callable while run_plan runs")
            part = ToolCallPart(tool_name=name, args=arguments, tool_call_id=f"{parent_id}__{next(counter)}")
            coroutine = _call(manager, part)
            future = context.copy().run(asyncio.run_coroutine_threadsafe, coroutine, loop)
            return future.result()

        return call

    out = []
    for name, tool in tools.items():
        definition = tool.tool_def
        out.append(
            HostedTool(
                name=name,
                description=definition.description or "",
                input_schema=definition.parameters_json_schema,
                result_schema=definition.return_schema if definition.return_schema is not None else {},
                call=dispatcher(name),
            )
        )
    return out


async def _call(manager: ToolManager[Any], part: ToolCallPart) -> Any:
    """One tool call of a plan, through PydanticAI; a deferral inside a plan is refused (the policy's
    `confirm` is how a plan's call waits for the person)."""
    try:
        result = await manager.handle_call(part, wrap_validation_errors=False)
    except ApprovalRequired as e:
        raise RuntimeError(
            f"tool {part.tool_name!r} asks for approval inside a plan: let the policy decide it "
            "(`on_violation: confirm`)"
        ) from e
    if isinstance(result, ToolDenied):
        raise RuntimeError(f"tool {part.tool_name!r} was denied")
    if isinstance(result, ToolReturn):
        result = result.return_value
    return jsonable(result)


__all__ = ["RUN_PLAN", "ZamburakCodeMode", "ZamburakToolset", "render_diagnostics"]
