"""Hyperparameter search: each trial is a torchx app, results come back through a tracker.

    python examples/hpo/search.py --tracker_base /tmp/hpo --trials 4 --parallel 2

Every trial runs examples/train/trainer.py as its own app through the runner (local_cwd
by default, so trials are processes on this machine, ``--parallel`` at a time). A trial
reports its validation loss into ``FsspecResultTracker(tracker_base)[trial_id]``; the
search reads the tracker, not the trials' logs, to rank them. Random search by default,
``--grid`` for the full grid.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
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
) -> dict[str, Any]:
    points = propose(trials, grid, seed)
    tracker = FsspecResultTracker(tracker_base)
    with get_runner("hpo") as runner:
        for start in range(0, len(points), parallel):
            batch = []
            for i, point in enumerate(points[start : start + parallel], start):
                trial_id = f"trial_{i}"
                app = python(
                    "--steps", str(steps), "--lr", str(point["lr"]),
                    "--hidden", str(point["hidden"]),
                    "--tracker_base", tracker_base, "--trial_id", trial_id,
                    script=TRAINER, name=trial_id,
                )  # fmt: skip
                batch.append((trial_id, runner.run(app, scheduler)))
            for trial_id, handle in batch:  # the batch runs in parallel; wait for all of it
                status = runner.wait(handle)
                print(f"{trial_id}: {status.state.name if status else 'unknown'}", flush=True)

    results = {key: tracker[key] for key in (f"trial_{i}" for i in range(len(points)))
               if key in tracker}  # fmt: skip
    if not results:
        raise SystemExit(f"no trial reported to {tracker_base}; see the trials' logs")
    best = min(results, key=lambda k: float(results[k]["val_loss"]))
    return {"best": best, "best_result": results[best], "trials": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracker_base", required=True, help="any fsspec URL trials can reach")
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
    summary = run_search(
        ns.tracker_base, ns.trials, ns.parallel, ns.steps, ns.grid, ns.seed, ns.scheduler
    )
    print("best " + json.dumps({"trial": summary["best"], **summary["best_result"]}))


if __name__ == "__main__":
    main()
