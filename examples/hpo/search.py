"""Hyperparameter search as one torchx sweep: trials are apps, results come from a tracker.

    python examples/hpo/search.py --tracker_base /tmp/hpo_runs --trials 4 --parallel 2

The search submits ONE sweep of the ``trial`` component (examples/hpo/trial.py) through
``Runner.run_sweep``: the scheduler runs its trials at most ``--parallel`` at once (local
processes on ``local_cwd``; one job array on Slurm). Each trial records its run (settings,
``val_loss``) through ``torchx.tracker.AppRun`` with the sweep as its parent run; the
search reads each trial's ``val_loss`` back from that tracker as ``torchx status SWEEP
--objective val_loss`` reads it (a value that is no finite number leaves its trial
unscored), ranks the trials and prints the sweep's results table, the same one that
command prints (less its warnings). Random points by default (``--seed``), ``--grid`` for
the grid in order.

The trials' tracker is the launcher's ``[torchx:tracker]`` (``.torchxconfig``); with none
configured, an fsspec tracker at ``--tracker_base``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from torchx.runner import Sweep, SweepStatus, TrialStatus, get_runner, trackers_env
from torchx.specs import AppState
from torchx.tracker import TrackerBase, trackers_from_environ

COMPONENT = f"{Path(__file__).resolve().parent / 'trial.py'}:trial"
OBJECTIVE = "val_loss"
SPACE: dict[str, list[Any]] = {
    "lr": [0.001, 0.01, 0.05, 0.2],
    "hidden": [4, 16, 32],
}


def propose(n: int, grid: bool, seed: int) -> list[dict[str, Any]]:
    """``n`` distinct points of SPACE: random picks, or the first ``n`` of the grid."""
    import random

    points = [
        dict(zip(SPACE, values, strict=True)) for values in itertools.product(*SPACE.values())
    ]
    if not grid:
        random.Random(seed).shuffle(points)
    return points[:n]


def run_search(
    trials: int,
    parallel: int,
    steps: int,
    grid: bool = False,
    seed: int = 0,
    scheduler: str = "local_cwd",
    tracker_base: str | None = None,
) -> SweepStatus:
    """Run the sweep to its end; its status, trials ranked best (lowest val_loss) first."""
    sweep = Sweep.of(COMPONENT, propose(trials, grid, seed), ["--steps", str(steps)], parallel)
    with get_runner("hpo") as runner:
        if not runner.config.trackers() and "TORCHX_TRACKERS" not in os.environ:
            if not tracker_base:
                raise SystemExit(
                    "--tracker_base: no [torchx:tracker] in .torchxconfig; name where the trials"
                    " record their runs, e.g. --tracker_base /tmp/hpo_runs"
                )
            # The launcher's environment names the trackers when no config file does.
            os.environ["TORCHX_TRACKERS"] = "fsspec"
            os.environ["TORCHX_TRACKER_FSSPEC_CONFIG"] = tracker_base
        handle = runner.run_sweep(sweep, scheduler)
        print(handle, flush=True)
        status = runner.wait_sweep(handle, 0.5)
        tracker = trackers_from_environ(trackers_env(runner.config.trackers()))[0]
    score(status, tracker)
    status.rank()
    return status


def score(status: SweepStatus, tracker: TrackerBase) -> None:
    """Each trial's objective from what its run recorded in ``tracker``, read as ``torchx
    status SWEEP --objective val_loss`` reads it (``TrialStatus.score``): a value that is
    no finite number (``"nan?"``, a dict, NaN) leaves its trial unscored."""
    for t in status.trials:
        t.score(tracker.metadata(t.handle).get(OBJECTIVE) if t.handle else None)


def best_trial(status: SweepStatus) -> TrialStatus | None:
    """The best trial of a ranked ``status``: the first, if it succeeded with a finite
    objective. ``rank`` puts those first, so when the first is not one (every trial failed,
    or diverged to NaN), there is none: a trial that recorded a loss and then crashed is
    no result to pick."""
    first = status.trials[0] if status.trials else None
    if first is None or first.state != AppState.SUCCEEDED or first.objective is None:
        return None
    return first if math.isfinite(first.objective) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tracker_base", help="where trials record their runs, when .torchxconfig names none"
    )
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--steps", type=int, default=100, help="training steps per trial")
    parser.add_argument("--grid", action="store_true", help="walk the grid instead of sampling")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scheduler", default="local_cwd")
    ns = parser.parse_args()
    size = len(list(itertools.product(*SPACE.values())))
    if not 1 <= ns.trials <= size:
        parser.error(f"--trials: got {ns.trials}; expected 1 to {size} (the grid's size)")
    if ns.parallel < 1:
        parser.error(f"--parallel: got {ns.parallel}; expected 1 or more")
    status = run_search(
        ns.trials, ns.parallel, ns.steps, ns.grid, ns.seed, ns.scheduler, ns.tracker_base
    )
    print(status.format(OBJECTIVE))
    best = best_trial(status)
    if best is None or best.objective is None:
        raise SystemExit(
            f"no trial succeeded with a finite {OBJECTIVE}; see torchx log {status.handle}/INDEX"
        )
    print("best " + json.dumps({"trial": best.index, **best.args, OBJECTIVE: best.objective}))
    sys.exit(0 if status.state.name == "SUCCEEDED" else 1)


if __name__ == "__main__":
    main()
