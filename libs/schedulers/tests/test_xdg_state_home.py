"""The local state folder follows the XDG spec: a relative XDG_STATE_HOME is ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchx.schedulers.local_scheduler import create_scheduler, default_state_dir


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return home


@pytest.mark.parametrize("value", ["state", "./state", "../state", "~/state", ""])
def test_a_relative_or_empty_value_falls_back_to_the_home_folder(
    home: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", value)
    assert default_state_dir() == home / ".local" / "state" / "torchx"
    assert create_scheduler("s").state_dir == home / ".local" / "state" / "torchx"


def test_an_absolute_value_is_used(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "elsewhere"))
    assert default_state_dir() == home / "elsewhere" / "torchx"
