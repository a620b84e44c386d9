"""The tests' mailbox: an inbox read from inbox.json (newest first, one of them injected) and an outbox the
tests look at after each run. Each tool is a plain typed function."""

from __future__ import annotations

import json
from pathlib import Path

try:  # pydantic (PydanticAI's tool schemas) needs typing_extensions' TypedDict before Python 3.12
    from typing_extensions import TypedDict
except ImportError:
    from typing import TypedDict

HERE = Path(__file__).parent / "mail"
POLICY = HERE / "zamburak.yaml"


class Mail(TypedDict):
    sender: str
    reply_to: str
    subject: str
    body: str


class Mailbox:
    def __init__(self) -> None:
        self.outbox: list[dict[str, str]] = []
        self.reads = 0

    def read_inbox(self) -> list[Mail]:
        """The inbox, newest mail first."""
        self.reads += 1
        return json.loads((HERE / "inbox.json").read_text())

    def send_mail(self, to: str, subject: str, body: str) -> str:
        """Send a mail; returns its id."""
        self.outbox.append({"to": to, "subject": subject, "body": body})
        return f"mail-{len(self.outbox)}"

    def tools(self) -> dict[str, object]:
        return {"read_inbox": self.read_inbox, "send_mail": self.send_mail}
