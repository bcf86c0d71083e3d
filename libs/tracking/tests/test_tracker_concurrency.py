"""Replicas of one app recording at once, as real processes on a shared store: nothing lost."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from torchx.tracker.backend.fsspec import create

if TYPE_CHECKING:
    from conftest import Backend, StartTogether

REPLICA = textwrap.dedent(
    """
    import os, sys, time
    from torchx.tracker import app_run_from_env
    rank, count, go = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    run = app_run_from_env()
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.005)
    for i in range(count):
        run.add_metadata(**{f"rank{rank}/step{i}": i, "last_writer": rank})
        run.add_artifact(f"ckpt-{rank}-{i}", f"/ckpt/{rank}/{i}.pt", {"rank": rank})
    """
)
RUN = "slurm://torchx/1234"
PARENT = "slurm://torchx/1000"


def test_replicas_writing_one_run_lose_nothing(
    shared_backend: Backend, tmp_path: Path, start_together: StartTogether
) -> None:
    replicas, count = (6, 25) if shared_backend.name == "local" else (3, 8)
    script = tmp_path / "replica.py"
    script.write_text(REPLICA)
    go = tmp_path / "go"
    env = {
        **shared_backend.child_env(),
        "TORCHX_JOB_ID": RUN,
        "TORCHX_PARENT_RUN_ID": PARENT,
        "TORCHX_TRACKERS": "fsspec",
        "TORCHX_TRACKER_FSSPEC_CONFIG": shared_backend.base,
    }
    commands = [
        [sys.executable, str(script), str(rank), str(count), str(go)] for rank in range(replicas)
    ]
    processes = start_together(commands, env, go)
    for process in processes:
        _, stderr = process.communicate(timeout=240)
        assert process.returncode == 0, stderr

    tracker = create(shared_backend.base, **shared_backend.storage_options)
    metadata = tracker.metadata(RUN)
    expected = {f"rank{r}/step{i}": i for r in range(replicas) for i in range(count)}
    assert {k: v for k, v in metadata.items() if k != "last_writer"} == expected
    assert metadata["last_writer"] in range(replicas)
    artifacts = tracker.artifacts(RUN)
    assert sorted(artifacts) == sorted(
        f"ckpt-{r}-{i}" for r in range(replicas) for i in range(count)
    )
    assert artifacts["ckpt-2-3"].path == "/ckpt/2/3.pt"
    # every replica recorded the same parent: one source, and one run listed
    assert [s.source_run_id for s in tracker.sources(RUN)] == [PARENT]
    assert tracker.run_ids() == [RUN]
    leftovers = [p for p in tracker.fs.find(tracker.root_dir) if "/." in p]
    assert leftovers == []
