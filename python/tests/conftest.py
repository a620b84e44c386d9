"""Shared setup: the mailbox policy is locked once per session against the mailbox's tools (the lock is
written to a copy of the policy, so the committed fixtures stay as they are)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import zamburak
from mailfixture import POLICY, Mailbox


@pytest.fixture(scope="session")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("policy")
    path = d / "zamburak.yaml"
    shutil.copy(POLICY, path)
    zamburak.lock(path, Mailbox().tools())
    return path


@pytest.fixture
def mailbox() -> Mailbox:
    return Mailbox()
