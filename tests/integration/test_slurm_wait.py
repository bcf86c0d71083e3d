"""``torchx wait`` on the test Slurm cluster (tests/fixtures/slurm.py): its exit code says
whether each app SUCCEEDED, FAILED or was CANCELLED."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TORCHX = Path(sys.executable).with_name("torchx")


def _torchx(cluster: Any, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TORCHX), *args],
        env=cluster.env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _submit(cluster: Any, cwd: Path, script: str) -> str:
    proc = _torchx(
        cluster,
        cwd,
        "run", "-s", "slurm", "-cfg", f"job_dir={cwd / 'jobs'},partition={cluster.partition}",
        "utils.sh", script,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_wait_exit_codes_on_slurm(slurm_env: Any, tmp_path: Path) -> None:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    ok = _submit(slurm_env, tmp_path, "true")
    failed = _submit(slurm_env, tmp_path, "exit 3")
    cancelled = _submit(slurm_env, tmp_path, "sleep 120")

    proc = _torchx(slurm_env, tmp_path, "wait", "--interval", "0.5", ok)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == f"{ok} SUCCEEDED\n"

    proc = _torchx(slurm_env, tmp_path, "wait", "--interval", "0.5", failed)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"{failed} FAILED")

    assert _torchx(slurm_env, tmp_path, "cancel", cancelled).returncode == 0
    proc = _torchx(slurm_env, tmp_path, "wait", "--interval", "0.5", cancelled)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"{cancelled} CANCELLED")

    # all three at once: one line each, exit 1 because not every app succeeded
    proc = _torchx(slurm_env, tmp_path, "wait", "--interval", "0.5", ok, failed, cancelled)
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) == 3
