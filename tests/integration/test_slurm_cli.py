"""The ``torchx`` command against the test Slurm cluster: run, then status and log."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppState

TORCHX = Path(sys.executable).with_name("torchx")


def _torchx(cluster: Any, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TORCHX), *args], env=cluster.env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_cli_run_status_and_log_on_slurm(slurm_env: Any, tmp_path: Path) -> None:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    job_dir = tmp_path / "job"
    run = _torchx(
        slurm_env,
        tmp_path,
        "run", "-s", "slurm", "-cfg", f"job_dir={job_dir},partition={slurm_env.partition}",
        "utils.echo", "--msg", "hi", "--num_replicas", "2",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    # slurm is not a local scheduler: the command submits, prints the handle and returns
    handle = run.stdout.strip()
    match = re.fullmatch(r"slurm://torchx/(\d+)", handle)
    assert match, run.stdout
    desc = SlurmScheduler().wait(match.group(1), timeout=90)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc

    status = _torchx(slurm_env, tmp_path, "status", handle)
    assert status.returncode == 0, status.stderr
    lines = [ln.strip() for ln in status.stdout.splitlines()]
    assert "State: SUCCEEDED" in lines
    # pytorch/torchx's layout: a role's first replica is marked with '*'
    replicas = sorted(ln.lstrip("*") for ln in lines if "echo[" in ln)
    assert replicas == [
        "echo[0]:SUCCEEDED (exitcode: 0) host=node1",
        "echo[1]:SUCCEEDED (exitcode: 0) host=node2",
    ]

    log = _torchx(slurm_env, tmp_path, "log", handle)
    assert log.returncode == 0, log.stderr
    assert sorted(log.stdout.splitlines()) == ["echo/0 hi", "echo/1 hi"]
    one = _torchx(slurm_env, tmp_path, "log", f"{handle}/echo/1")
    assert one.stdout == "echo/1 hi\n"
    assert (job_dir / f"slurm-{match.group(1)}-echo-1.out").read_text() == "hi\n"
