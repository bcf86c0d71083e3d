"""examples/hpo: trials run as torchx apps in parallel; the best reported is truly the best."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from torchx.runtime.tracking import FsspecResultTracker

ROOT = Path(__file__).resolve().parents[2]
SEARCH = ROOT / "examples" / "hpo" / "search.py"


def _search_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_hpo_search", SEARCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_search_picks_the_trial_with_the_lowest_reported_loss(tmp_path: Path) -> None:
    base = tmp_path / "hpo"
    env_state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    proc = subprocess.run(
        [sys.executable, str(SEARCH), "--tracker_base", str(base),
         "--trials", "3", "--parallel", "3", "--steps", "40", "--seed", "1"],
        capture_output=True, text=True, cwd=tmp_path, check=False,
        env={**os.environ, **env_state},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()[:3]
    assert [line.split(": ")[1].split()[0] for line in lines] == ["SUCCEEDED"] * 3
    printed = {line.split(":")[0]: line.split() for line in lines}

    # Read what the trials themselves left, independently of the search's own bookkeeping.
    tracker = FsspecResultTracker(str(base))
    assert sorted(tracker) == ["trial_0", "trial_1", "trial_2"]
    losses = {key: float(tracker[key]["val_loss"]) for key in tracker}
    true_best = min(losses, key=losses.__getitem__)
    best = json.loads(proc.stdout.split("best ", 1)[1])
    assert best["trial"] == true_best
    assert best["val_loss"] == losses[true_best]
    assert (best["lr"], best["hidden"]) == (tracker[true_best]["lr"], tracker[true_best]["hidden"])
    # Each trial's line carries its objective and handle, as the tracker holds them.
    for trial, words in printed.items():
        assert words[2] == f"val_loss={float(tracker[trial]['val_loss']):.4f}"
        assert words[3].startswith(f"local_cwd://hpo/{trial}-")
    # Each trial recorded its run through AppRun, as a descendant of the search.
    from torchx.tracker.backend.fsspec import create

    runs = create(f"{base}_runs")
    handles = sorted(words[3] for words in printed.values())
    assert runs.run_ids(parent_run_id="hpo/search") == handles
    for trial, words in printed.items():
        recorded = runs.metadata(words[3])
        assert recorded["val_loss"] == tracker[trial]["val_loss"]
        assert recorded["lr"] == tracker[trial]["lr"]
    # The trials tried different settings, so the comparison meant something.
    points = {(tracker[k]["lr"], tracker[k]["hidden"]) for k in tracker}
    assert len(points) == 3 and len(set(losses.values())) == 3


def test_proposals_are_distinct_and_grid_is_in_order() -> None:
    search = _search_module()
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
