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


def test_waiting_on_three_apps_asks_one_sacct_per_look(
    slurm_env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Runner.wait_each`` of three Slurm apps: each look is one ``sacct`` for all three
    (``describe_many``); only an app that ended is then described in full, once."""
    from torchx.runner import get_runner
    from torchx.schedulers.slurm_scheduler import SlurmScheduler
    from torchx.specs import AppDef, AppState, Role

    runner = get_runner()
    cfg = {"job_dir": str(tmp_path / "jobs"), "partition": slurm_env.partition}
    # long enough that the first look finds all three running, even on a loaded machine
    apps = [
        AppDef(f"w{i}", roles=[Role("r", image=".", entrypoint="sleep", args=["3"])])
        for i in range(3)
    ]
    handles = [runner.run(app, "slurm", cfg) for app in apps]
    # counting the Slurm commands: a wrapper directory first on PATH
    path, calls = slurm_env.counting_path(tmp_path, ("sacct", "squeue", "scontrol"))
    monkeypatch.setenv("PATH", path)

    def commands() -> list[str]:
        return calls.read_text().split() if calls.exists() else []

    looks: list[tuple[int, list[str]]] = []  # (apps asked about, commands that look ran)
    full: list[str] = []
    many, one = SlurmScheduler.describe_many, SlurmScheduler.describe

    def counted_many(self: SlurmScheduler, app_ids: Any) -> Any:
        before = len(commands())
        out = many(self, app_ids)
        looks.append((len(app_ids), commands()[before:]))
        return out

    def counted_one(self: SlurmScheduler, app_id: str) -> Any:
        full.append(app_id)
        return one(self, app_id)

    monkeypatch.setattr(SlurmScheduler, "describe_many", counted_many)
    monkeypatch.setattr(SlurmScheduler, "describe", counted_one)
    got = dict(runner.wait_each(handles, timeout=150, wait_interval=0.5))
    assert {h: s.state if s else None for h, s in got.items()} == dict.fromkeys(
        handles, AppState.SUCCEEDED
    )
    assert looks and looks[0][0] == 3 and [c for c in looks[0][1] if c != "squeue"] == ["sacct"]
    for _, ran in looks:
        # one sacct for the look, one more (and a scontrol) per full description in it
        assert ran.count("sacct") - ran.count("scontrol") == 1, looks
        assert ran.count("squeue") <= 1, looks
    assert sorted(set(full)) == sorted(h.rsplit("/", 1)[1] for h in handles)
