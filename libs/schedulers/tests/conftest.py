from __future__ import annotations

from collections.abc import Iterator
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
