"""The exceptions of the Python API. Each carries the text the CLI printed for the same failure, and the
CLI's exit code: what a tool, server or model wrote is never part of it (the CLI keeps such words for the
person's terminal, and so does this package)."""

from __future__ import annotations


class ZamburakError(Exception):
    """Zamburak could not do what was asked; nothing ran that the message does not mention."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class ConfigurationError(ZamburakError):
    """The policy, its MCP lock, the plan file or a snapshot cannot be used (the CLI's exit code 2): nothing
    ran, or nothing was decided."""
