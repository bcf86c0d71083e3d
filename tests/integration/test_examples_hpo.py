"""examples/hpo: the search is one sweep of the trial component; the best reported is truly
the best."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from torchx_test_fixtures_scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SEARCH = ROOT / "examples" / "hpo" / "search.py"


@pytest.mark.slow
def test_search_is_one_sweep_and_picks_the_lowest_recorded_loss(tmp_path: Path) -> None:
    runs_base = tmp_path / "runs"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TORCHX_")},
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    proc = subprocess.run(
        [sys.executable, str(SEARCH), "--tracker_base", str(runs_base),
         "--trials", "3", "--parallel", "2", "--steps", "40", "--seed", "1"],
        capture_output=True, text=True, cwd=tmp_path, check=False, env=env, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    sweep = lines[0]
    assert sweep.startswith("local_cwd://hpo/sweep-"), proc.stdout
    assert lines[1] == f"Sweep {sweep}: SUCCEEDED (3 SUCCEEDED)"
    assert lines[2].split()[:4] == ["#", "lr", "hidden", "val_loss"]
    rows = [line.split() for line in lines[3:6]]

    # What the trials themselves recorded, read independently of the search.
    from torchx.tracker.backend.fsspec import create

    tracker = create(str(runs_base))
    handles = tracker.run_ids(parent_run_id=sweep)
    assert sorted(row[-1] for row in rows) == handles and len(handles) == 3
    losses = {h: float(str(tracker.metadata(h)["val_loss"])) for h in handles}
    # The table is ranked best first and shows each trial's own settings and loss.
    assert [row[-1] for row in rows] == sorted(handles, key=losses.__getitem__)
    for row in rows:
        recorded = tracker.metadata(row[-1])
        assert (float(row[1]), int(row[2])) == (recorded["lr"], recorded["hidden"])
        assert float(row[3]) == pytest.approx(losses[row[-1]], rel=1e-5)
    best = json.loads(proc.stdout.split("best ", 1)[1])
    assert best["val_loss"] == min(losses.values())
    # The trials tried different settings, so the comparison meant something.
    assert len({(r[1], r[2]) for r in rows}) == 3 and len(set(losses.values())) == 3


def test_proposals_are_distinct_and_grid_is_in_order() -> None:
    search = load_script("example_hpo_search", "examples/hpo/search.py")
    size = len(search.SPACE["lr"]) * len(search.SPACE["hidden"])
    every = search.propose(size, grid=False, seed=3)
    assert len({tuple(p.values()) for p in every}) == size
    assert search.propose(2, grid=True, seed=0) == [
        {"lr": search.SPACE["lr"][0], "hidden": search.SPACE["hidden"][0]},
        {"lr": search.SPACE["lr"][0], "hidden": search.SPACE["hidden"][1]},
    ]


def test_too_many_trials_is_refused_with_the_grid_size(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SEARCH), "--tracker_base", str(tmp_path), "--trials", "99"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "--trials: got 99; expected 1 to 12" in proc.stderr


def test_no_tracker_anywhere_is_refused_with_the_option_to_give(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHX_")}
    proc = subprocess.run(
        [sys.executable, str(SEARCH), "--trials", "1"],
        capture_output=True, text=True, check=False, cwd=tmp_path, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.startswith("--tracker_base: no [torchx:tracker] in .torchxconfig")


def test_best_is_a_succeeded_trial_with_a_finite_loss() -> None:
    """A diverged trial (NaN) or one that recorded its loss and then failed is never best."""
    from torchx.runner import SweepStatus, TrialStatus
    from torchx.specs import AppState

    search = load_script("example_hpo_search", "examples/hpo/search.py")

    def status(*rows: tuple[float | None, AppState]) -> SweepStatus:
        trials = [TrialStatus(i, {}, s, 1, 0, None, objective=o) for i, (o, s) in enumerate(rows)]
        st = SweepStatus("h", AppState.FAILED, "group", trials)
        st.rank()
        return st

    ok, failed = AppState.SUCCEEDED, AppState.FAILED
    best = search.best_trial(status((0.5, ok), (float("nan"), ok), (0.1, failed), (0.3, ok)))
    assert best is not None and best.index == 3
    assert search.best_trial(status((float("nan"), ok), (0.1, failed), (None, ok))) is None


def test_a_loss_that_is_no_number_leaves_its_trial_unscored(tmp_path: Path) -> None:
    """The search reads val_loss as `torchx status --objective` does: a trial that recorded
    something else is unscored and ranked after the scored ones, not a crash."""
    from torchx.runner import SweepStatus, TrialStatus
    from torchx.specs import AppState
    from torchx.tracker.backend.fsspec import create

    search = load_script("example_hpo_search", "examples/hpo/search.py")
    tracker = create(str(tmp_path / "runs"))
    recorded: list[object] = ["nan?", {"loss": 0.1}, "0.5", 0.25, "inf"]
    trials = []
    for i, value in enumerate(recorded):
        handle = f"local_cwd://hpo/trial-{i}"
        tracker.add_metadata(handle, val_loss=value)
        trials.append(TrialStatus(i, {}, AppState.SUCCEEDED, 1, 0, handle))
    trials.append(TrialStatus(len(recorded), {}, AppState.SUCCEEDED, 1, 0, None))
    st = SweepStatus("h", AppState.SUCCEEDED, "group", trials)
    search.score(st, tracker)
    st.rank()
    assert [(t.index, t.objective) for t in st.trials] == [
        (3, 0.25), (2, 0.5), (0, None), (1, None), (4, None), (5, None),
    ]  # fmt: skip
    best = search.best_trial(st)
    assert best is not None and best.index == 3
