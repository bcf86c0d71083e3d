"""Function transport files live in the local state folder; a relative XDG_STATE_HOME is
ignored, as the XDG spec says."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchx.runner._executor import default_transport


@pytest.mark.parametrize("value", ["state", "./state", ""])
def test_a_relative_value_falls_back_to_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", value)
    assert default_transport() == str(tmp_path / ".local" / "state" / "torchx" / "functions")


def test_an_absolute_value_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "s"))
    assert default_transport() == str(tmp_path / "s" / "torchx" / "functions")
