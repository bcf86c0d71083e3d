from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from torchx.schedulers.local_scheduler import LocalScheduler


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Subprocesses started by a test find apps through the same state dir.
    d = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(d))
    return d / "torchx"


@pytest.fixture
def scheduler(state_dir: Path) -> Iterator[LocalScheduler]:
    s = LocalScheduler("test", state_dir=state_dir)
    yield s
    for app in s.list():
        s.cancel(app.app_id)
    s.close()


OnPath = Callable[[str, str], Path]


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> OnPath:
    """Puts a shell script called ``name`` first on PATH for this test: a stand-in for a
    program (ssh, a docker credential helper) that the code under test runs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    def put(name: str, script: str) -> Path:
        program = bin_dir / name
        program.write_text(f"#!/bin/sh\n{script}")
        program.chmod(program.stat().st_mode | stat.S_IEXEC)
        return program

    return put
