"""What the API returns: typed views of the JSON documents `zamburak lint --format json` and `zamburak run
--format json` print. Field names follow the CLI's; each keeps the document it came from in `raw`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["completed", "rejected", "error", "denied", "suspended"]


@dataclass(frozen=True)
class Label:
    """Where a value came from and who may read it (docs/semantics.md, "Labels")."""

    integrity: str
    """`trusted`, `untrusted` or `unknown`."""
    verified: list[str]
    tags: list[str]
    readers: list[str] | None
    """`None`: public."""
    sources: list[str]
    """The tool calls the value derives from, such as `read_inbox#1`."""

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Label:
        return cls(
            integrity=str(doc.get("integrity", "unknown")),
            verified=list(doc.get("verified") or []),
            tags=list(doc.get("tags") or []),
            readers=None if doc.get("readers") is None else list(doc["readers"]),
            sources=list(doc.get("sources") or []),
        )


@dataclass(frozen=True)
class Edit:
    """Replace the plan's bytes `start..end` (line and column, 1-based, for people) with `content`."""

    start: int
    end: int
    line: int
    column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    """An edit that resolves a finding, and how sure lint is that it is what the plan meant."""

    message: str
    applicability: str
    edits: list[Edit]


@dataclass(frozen=True)
class Diagnostic:
    """One finding of `lint` (docs/diagnostics.md lists every code)."""

    code: str
    severity: Literal["error", "warning"]
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    help: str | None
    tool: str | None
    argument: str | None
    fixes: list[Fix]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Diagnostic:
        fix = doc.get("fix")
        fixes = []
        if isinstance(fix, dict):
            fixes.append(
                Fix(
                    message=str(fix.get("message", "")),
                    applicability=str(fix.get("applicability", "")),
                    edits=[Edit(**{k: e[k] for k in Edit.__dataclass_fields__}) for e in fix.get("edits", [])],
                )
            )
        return cls(
            code=str(doc["code"]),
            severity=doc["severity"],
            line=int(doc["line"]),
            column=int(doc["column"]),
            end_line=int(doc.get("end_line", doc["line"])),
            end_column=int(doc.get("end_column", doc["column"])),
            message=str(doc["message"]),
            help=doc.get("hint"),
            tool=doc.get("tool"),
            argument=doc.get("argument"),
            fixes=fixes,
            raw=doc,
        )

    def __str__(self) -> str:
        text = f"{self.line}:{self.column}: {self.severity}[{self.code}]: {self.message}"
        if self.help:
            text += f"\n  help: {self.help}"
        return text


@dataclass(frozen=True)
class Decision:
    """One decided tool call."""

    call_id: int
    tool: str
    line: int
    decision: Literal["allow", "draft", "confirm", "deny"]
    rule: str
    reason: str
    approval: str | None
    """For a `confirm` a person took: `approved` or `rejected`."""

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Decision:
        return cls(
            call_id=int(doc["call_id"]),
            tool=str(doc["tool"]),
            line=int(doc["line"]),
            decision=doc["decision"],
            rule=str(doc["rule"]),
            reason=str(doc.get("reason", "")),
            approval=doc.get("approval"),
        )


@dataclass(frozen=True)
class Segment:
    """One `print` of the plan: its label, and its text when trusted and public (otherwise the text went to
    the person only, in `Result.log`)."""

    text: str | None
    label: Label


@dataclass(frozen=True)
class PlanError:
    """What stopped the plan, in Zamburak's words (redacted where it could depend on tool data)."""

    type: str
    line: int | None
    message: str


@dataclass(frozen=True)
class Claim:
    """The call a suspended run waits on, as the person deciding it sees it: approve it with
    `zamburak.approve(result.snapshot, claim=claim.code, …)`."""

    code: str
    """The claim code `approve` takes: it binds the approval to exactly these values."""
    call_id: int
    tool: str
    line: int
    values: dict[str, Any]
    """Each argument's value (the person deciding may read them all; the planner may not)."""
    labels: dict[str, Label]
    non_readers: dict[str, list[str]]
    """Per argument, the recipients who may not read it."""
    rule: str
    reason: str
    text: str
    """The claim as `zamburak run` shows it to a person on the terminal."""


@dataclass(frozen=True)
class Result:
    """What a run did (`zamburak.run`), or what a decision on its claim led to (`approve`, `reject`)."""

    status: Status
    exit_code: int
    outcome: str
    decisions: list[Decision]
    output: list[Segment]
    error: PlanError | None
    diagnostics: list[dict[str, Any]]
    claim: Claim | None
    snapshot: str | None
    """The suspended run's snapshot, which `approve` and `reject` take."""
    trace: str | None
    trace_head: str | None
    planner: dict[str, Any]
    """What a planner model may be told about the run (docs/semantics.md, "What the planner and the
    person are told"): the answer `zamburak mcp serve` gives, cut where the run first depends on data the
    planner may not read."""
    log: str = field(repr=False)
    """What the CLI printed for the person (stderr): the plan's prints, the claim, warnings."""
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, doc: dict[str, Any], log: str) -> Result:
        approval = doc.get("approval")
        claim = None
        snapshot = None
        if isinstance(approval, dict):
            snapshot = approval.get("snapshot")
            call = approval.get("claim") or {}
            claim = Claim(
                code=str(approval.get("code", "")),
                call_id=int(call.get("call_id", 0)),
                tool=str(call.get("tool", "")),
                line=int(call.get("line", 0)),
                values=dict(approval.get("values") or {}),
                labels={a["name"]: Label.from_json(a.get("label") or {}) for a in call.get("args", [])},
                non_readers={k: list(v) for k, v in (approval.get("non_readers") or {}).items()},
                rule=str(call.get("rule", "")),
                reason=str(call.get("reason", "")),
                text=str(approval.get("text", "")),
            )
        error = doc.get("error")
        return cls(
            status=doc["status"],
            exit_code=int(doc["exit_code"]),
            outcome=str(doc.get("outcome", "")),
            decisions=[Decision.from_json(d) for d in doc.get("decisions", [])],
            output=[Segment(text=s.get("text"), label=Label.from_json(s.get("label") or {})) for s in doc.get("output", [])],
            error=None
            if not isinstance(error, dict)
            else PlanError(type=str(error.get("type", "")), line=error.get("line"), message=str(error.get("message", ""))),
            diagnostics=list(doc.get("diagnostics", [])),
            claim=claim,
            snapshot=snapshot,
            trace=doc.get("trace"),
            trace_head=doc.get("head"),
            planner=dict(doc.get("planner") or {}),
            log=log,
            raw=doc,
        )
