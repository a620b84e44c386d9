"""Zamburak from Python: lint, run, approve and reject agent plans under a policy, with Python callables as
tools (the `zamburak` binary does the work; this package runs it and types what it prints).

```python
import zamburak

diagnostics = zamburak.lint(plan, policy="zamburak.yaml")
result = zamburak.run(plan, policy="zamburak.yaml", tools={"read_inbox": read_inbox, "send_mail": send_mail})
if result.status == "suspended":
    print(result.claim.text)
    result = zamburak.approve(result.snapshot, claim=result.claim.code, by="me", tools=...)
```

`zamburak.pydantic_ai.ZamburakCodeMode` gives a PydanticAI agent the same, as its code mode."""

from ._api import (
    aapprove,
    alint,
    alock,
    approve,
    areject,
    arun,
    astubs,
    find_policy,
    lint,
    lock,
    lock_path,
    reject,
    run,
    stubs,
)
from ._binary import find_binary
from ._errors import ConfigurationError, ZamburakError
from ._types import Claim, Decision, Diagnostic, Edit, Fix, Label, PlanError, Result, Segment, Status
from .host import HostedTool, tool_from_callable

__all__ = [
    "Claim",
    "ConfigurationError",
    "Decision",
    "Diagnostic",
    "Edit",
    "Fix",
    "HostedTool",
    "Label",
    "PlanError",
    "Result",
    "Segment",
    "Status",
    "ZamburakError",
    "aapprove",
    "alint",
    "alock",
    "approve",
    "areject",
    "arun",
    "astubs",
    "find_binary",
    "find_policy",
    "lint",
    "lock",
    "lock_path",
    "reject",
    "run",
    "stubs",
    "tool_from_callable",
]
