"""Preemption on the test Slurm cluster (tests/fixtures/slurm.py): examples/train, warned
mid-run as a preemption does (``scancel --signal=USR1 --batch``), checkpoints, is requeued
under the same job id and ends with the weights of an uninterrupted run; an app that keeps
asking for a requeue past ``max_time_requeues`` ends FAILED with the reason."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, AppState, Role

WAIT_S = 240


def job_files(job_dir: Path) -> dict[str, str]:
    return {p.name: p.read_text(errors="replace")[-3000:] for p in job_dir.glob("slurm-*")}


@pytest.mark.slow
def test_a_warned_job_checkpoints_is_requeued_and_ends_with_uninterrupted_weights(
    slurm_env: Any, tmp_path: Path, train_run: Any
) -> None:
    straight = tmp_path / "straight"
    train_run.uninterrupted(straight)

    job_dir, ckpt = tmp_path / "job", tmp_path / "requeued"
    role = Role("trainer", image="", entrypoint=sys.executable, args=train_run.args(ckpt, 0.05))
    slurm = SlurmScheduler("test")
    app_id = slurm.submit(
        AppDef("train", [role]), {"job_dir": str(job_dir), "partition": slurm_env.partition}
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while not (ckpt / "step_000020.pt").exists():
            assert time.monotonic() < deadline, (slurm.describe(app_id), job_files(job_dir))
            time.sleep(0.2)
        slurm_env.run("scancel", "--signal=USR1", "--batch", app_id)
        desc = slurm.wait(app_id, timeout=WAIT_S)
        files = job_files(job_dir)
        assert desc is not None and desc.state == AppState.SUCCEEDED, (desc, files)
        assert (desc.num_preemptions, desc.num_restarts) == (1, 0), (desc, files)
        assert desc.roles_statuses[0].replicas[0].attempt == 2
        assert "Num Preemptions: 1" in desc.to_status().format()
        out = files[f"slurm-{app_id}-trainer-0.out"]
        # every attempt's output is kept, a marker line between them
        first, marker, second = out.partition("[torchx] attempt 2 of trainer/0 starts")
        assert marker, files
        assert first.count(": warned, saved") == 1 and "resumed from " in second, files
    finally:
        slurm.cancel(app_id)
    train_run.assert_same_weights(straight, ckpt)


@pytest.mark.slow
def test_past_the_cap_a_time_limit_requeue_ends_failed_with_the_reason(
    slurm_env: Any, tmp_path: Path
) -> None:
    # An app that asks for a requeue by itself (exit 75) counts as reaching its time limit.
    role = Role("r", image="", entrypoint="bash", args=["-c", "echo run $TORCHX_ATTEMPT; exit 75"])
    slurm = SlurmScheduler("test")
    app_id = slurm.submit(
        AppDef("capped", [role]),
        {"job_dir": str(tmp_path), "partition": slurm_env.partition, "max_time_requeues": 1},
    )
    try:
        desc = slurm.wait(app_id, timeout=WAIT_S)
        files = job_files(tmp_path)
        assert desc is not None and desc.state == AppState.FAILED, (desc, files)
        assert "after 1 time-limit requeue(s)" in desc.msg, (desc, files)
        assert "'max_time_requeues' (1)" in desc.msg
        assert (desc.num_preemptions, desc.num_restarts) == (1, 0), desc
        # this attempt's own exit record, never the previous run's
        (replica,) = desc.roles_statuses[0].replicas
        assert replica.exit_code == 75 and replica.attempt == 2, desc
    finally:
        slurm.cancel(app_id)
