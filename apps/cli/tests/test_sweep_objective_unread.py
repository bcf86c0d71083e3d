"""``torchx status SWEEP --objective``: a trial whose newest objective may be in a record
the tracker could not read is left unranked and named, never ranked on an older value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from torchx.cli._sweep_cli import print_status
from torchx.runner import SweepStatus, TrialStatus
from torchx.specs import AppState
from torchx.tracker.backend.fsspec import create

SWEEP = "local_cwd://torchx/sweep-1"
TRIALS = [f"local_cwd://torchx/train-{i}" for i in range(3)]


class _Recorded:
    """Answers sweep_status as the runner does for a sweep whose trials all succeeded
    (the trackers read here are real)."""

    def sweep_status(self, handle: str) -> SweepStatus:
        trials = [
            TrialStatus(i, {"lr": str(i)}, AppState.SUCCEEDED, 1, 0, h)
            for i, h in enumerate(TRIALS)
        ]
        return SweepStatus(handle, AppState.SUCCEEDED, "parallel", trials)


def _configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An fsspec tracker configured in ``tmp_path`` (the working directory); its root."""
    for key in ("TORCHX_TRACKERS", "TORCHX_TRACKER_FSSPEC_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "runs"
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={root}\n"
    )
    return root


def test_a_trial_whose_newest_objective_is_unread_is_left_unranked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _configured(tmp_path, monkeypatch)
    tracker = create(str(root))
    for handle, objective in zip(TRIALS, (0.3, 0.2, 0.5), strict=True):
        tracker.add_metadata(handle, objective=objective)
    tracker.add_metadata(TRIALS[2], objective=0.1)  # trial 2's newest: the best of all
    newest = max(root.glob("*/metadata/*.json"), key=lambda p: p.name)  # named by time
    newest.write_text("{damaged")

    runner: Any = _Recorded()
    print_status(runner, SWEEP, json_out=True)
    out, err = capsys.readouterr()
    rows = json.loads(out)["trials"]
    ranked = [(t["index"], t["objective"], t["objective_unread"]) for t in rows]
    # not (2, 0.5), its older value; and told apart from a trial that recorded none
    assert ranked == [(1, 0.2, False), (0, 0.3, False), (2, None, True)]
    first, second = err.splitlines()
    assert first.startswith(f"torchx: warning: corrupt tracker record at {str(newest)!r} was")
    assert second == (
        f"torchx: warning: trial 2 is left unranked: a record of its run {TRIALS[2]} was not"
        " read (named above), so its objective may not be the one it recorded last; fix that"
        " record to rank it"
    )


def _recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial i's run recorded loss=i/10 and lr in the configured tracker."""
    tracker = create(str(_configured(tmp_path, monkeypatch)))
    for i, handle in enumerate(TRIALS):
        tracker.add_metadata(handle, loss=i / 10, lr=i)


def test_a_misspelt_objective_is_said_with_the_names_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _recorded(tmp_path, monkeypatch)
    runner: Any = _Recorded()
    print_status(runner, SWEEP, json_out=False, objective="los")
    out, err = capsys.readouterr()
    assert err == "torchx: warning: --objective: no trial recorded 'los'; they recorded: loss, lr\n"
    assert out.splitlines()[1].split() == ["#", "lr", "state", "attempts", "exit", "handle"]
    print_status(runner, SWEEP, json_out=True, objective="loss", maximize=True)
    out, err = capsys.readouterr()
    assert err == ""
    assert [t["objective"] for t in json.loads(out)["trials"]] == [0.2, 0.1, 0.0]


def test_the_default_objective_unrecorded_is_no_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Runs record metadata for other uses; a status that named no objective says nothing.
    _recorded(tmp_path, monkeypatch)
    runner: Any = _Recorded()
    print_status(runner, SWEEP, json_out=False)
    out, err = capsys.readouterr()
    assert err == ""
    assert "objective" not in out
