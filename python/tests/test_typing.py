"""The installed package type-checks under `mypy --strict` (it ships `py.typed`, so its users' checkers read
its annotations), PydanticAI code mode included."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_the_package_type_checks_strictly() -> None:
    pytest.importorskip("mypy")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null", "-p", "zamburak"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
