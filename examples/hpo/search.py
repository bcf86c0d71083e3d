"""Hyperparameter search: each trial is a torchx app, results come back through a tracker.

    python examples/hpo/search.py --tracker_base /tmp/hpo --trials 4 --parallel 2

Every trial runs examples/train/trainer.py as its own app through the runner (local_cwd
by default, so trials are processes on this machine, ``--parallel`` at a time). A trial
reports its validation loss into ``FsspecResultTracker(tracker_base)[trial_id]``; the
search reads the tracker, not the trials' logs, to rank them. Random search by default,
``--grid`` for the full grid.

Each trial also records its run through ``torchx.tracker.AppRun`` (settings, result,
checkpoint) with the search as its parent run, ``hpo/<--experiment>``. Unless
``.torchxconfig`` names trackers, the runs go to an fsspec tracker at
``<tracker_base>_runs`` (beside the result tracker, not in it), so
``torchx tracker list jobs --parent-run-id hpo/<experiment>`` lists the trials. Each
trial's handle and objective are printed as it finishes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import time
from pathlib import Path
from typing import Any

from torchx.components.utils import python
from torchx.runner import get_runner
from torchx.runtime.tracking import FsspecResultTracker

TRAINER = str(Path(__file__).resolve().parents[1] / "train" / "trainer.py")
SPACE: dict[str, list[Any]] = {
    "lr": [0.001, 0.01, 0.05, 0.2],
    "hidden": [4, 16, 32],
}


def propose(n: int, grid: bool, seed: int) -> list[dict[str, Any]]:
    """``n`` distinct points of SPACE: random picks, or the first ``n`` of the grid."""
    points = [
        dict(zip(SPACE, values, strict=True)) for values in itertools.product(*SPACE.values())
    ]
    if not grid:
        random.Random(seed).shuffle(points)
    return points[:n]


def run_search(
    tracker_base: str,
    trials: int,
    parallel: int,
    steps: int,
    grid: bool = False,
    seed: int = 0,
    scheduler: str = "local_cwd",
    experiment: str = "search",
) -> dict[str, Any]:
    points = propose(trials, grid, seed)
    tracker = FsspecResultTracker(tracker_base)
    parent = f"hpo/{experiment}"
    with get_runner("hpo") as runner:
        if not runner.config.trackers() and "TORCHX_TRACKERS" not in os.environ:
            # The launcher's environment names the trackers when no config file does.
            os.environ["TORCHX_TRACKERS"] = "fsspec"
            os.environ["TORCHX_TRACKER_FSSPEC_CONFIG"] = f"{tracker_base.rstrip('/')}_runs"
        for start in range(0, len(points), parallel):
            batch = {}
            for i, point in enumerate(points[start : start + parallel], start):
                trial_id = f"trial_{i}"
                app = python(
                    "--steps", str(steps), "--lr", str(point["lr"]),
                    "--hidden", str(point["hidden"]),
                    "--tracker_base", tracker_base, "--trial_id", trial_id,
                    script=TRAINER, name=trial_id,
                )  # fmt: skip
                batch[runner.run(app, scheduler, parent_run_id=parent)] = trial_id
            report_as_they_finish(runner, batch, tracker)

    results = {key: tracker[key] for key in (f"trial_{i}" for i in range(len(points)))
               if key in tracker}  # fmt: skip
    if not results:
        raise SystemExit(f"no trial reported to {tracker_base}; see the trials' logs")
    best = min(results, key=lambda k: float(results[k]["val_loss"]))
    return {"best": best, "best_result": results[best], "trials": results}


def report_as_they_finish(runner: Any, batch: dict[str, str], tracker: Any) -> None:
    """Print ``trial: STATE objective handle`` for each trial of ``batch`` as it ends."""
    pending = dict(batch)
    while pending:
        for handle, trial_id in list(pending.items()):
            status = runner.status(handle)
            if status is not None and not status.is_terminal():
                continue
            state = status.state.name if status else "UNKNOWN"
            loss = tracker[trial_id]["val_loss"] if trial_id in tracker else None
            objective = f"val_loss={loss:.4f}" if isinstance(loss, float) else "val_loss=-"
            print(f"{trial_id}: {state} {objective} {handle}", flush=True)
            del pending[handle]
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracker_base", required=True, help="any fsspec URL trials can reach")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--steps", type=int, default=100, help="training steps per trial")
    parser.add_argument("--grid", action="store_true", help="walk the grid instead of sampling")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scheduler", default="local_cwd")
    parser.add_argument("--experiment", default="search", help="the trials' parent: hpo/NAME")
    ns = parser.parse_args()
    size = len(list(itertools.product(*SPACE.values())))
    if not 1 <= ns.trials <= size:
        parser.error(f"--trials: got {ns.trials}; expected 1 to {size} (the grid's size)")
    if ns.parallel < 1:
        parser.error(f"--parallel: got {ns.parallel}; expected 1 or more")
    summary = run_search(
        ns.tracker_base,
        ns.trials,
        ns.parallel,
        ns.steps,
        ns.grid,
        ns.seed,
        ns.scheduler,
        ns.experiment,
    )
    print("best " + json.dumps({"trial": summary["best"], **summary["best_result"]}))


if __name__ == "__main__":
    main()
