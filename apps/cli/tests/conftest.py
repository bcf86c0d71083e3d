from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Each test runs in its own directory with its own local scheduler state.

    The state lives under XDG_STATE_HOME, so apps launched by one test are invisible to
    the others and to the user's own ``torchx list``.
    """
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("TORCHXCONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert os.getcwd() == str(tmp_path)
