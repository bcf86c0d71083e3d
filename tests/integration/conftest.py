from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def run_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test runs in ``tmp_path``, its apps' local scheduler state under ``tmp_path/state``
    (invisible to other tests and to the user's ``torchx list``)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
