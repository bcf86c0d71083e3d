"""The ``torchx`` command against the test Slurm cluster: run, then status and log."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, AppState, Role

TORCHX = Path(sys.executable).with_name("torchx")


def _torchx(
    cluster: Any, cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TORCHX), *args],
        env={**cluster.env, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
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


def test_cli_list_shows_the_newest_slurm_jobs_with_their_times(
    slurm_env: Any, tmp_path: Path
) -> None:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    sched = SlurmScheduler()
    app = AppDef("listed", [Role("echo", image="", entrypoint="echo", args=["x"])])
    # submitted back to back: mostly within one second, which Slurm's times cannot order
    ids = [sched.submit(app, {"job_dir": str(tmp_path / f"j{i}")}) for i in range(3)]
    for app_id in ids:
        desc = sched.wait(app_id, timeout=90)
        assert desc is not None and desc.state == AppState.SUCCEEDED, desc

    # the times are read whatever format the user's profile asks Slurm's commands for
    listed = _torchx(
        slurm_env,
        tmp_path,
        "list", "-s", "slurm", "--limit", "2", "--json",
        env={"SLURM_TIME_FORMAT": "relative"},
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    # the two newest, newest last (next to the prompt), each with when it ran
    assert [r["app_id"] for r in rows] == ids[1:], rows
    for row in rows:
        submitted, started, ended = (
            datetime.fromisoformat(row[k]) for k in ("submitted_at", "started_at", "ended_at")
        )
        assert submitted <= started <= ended, row

    recent = _torchx(slurm_env, tmp_path, "list", "-s", "slurm", "--since", "1h", "--all")
    assert recent.returncode == 0, recent.stderr
    handles = [ln.split()[0] for ln in recent.stdout.splitlines()[1:]]
    assert handles[-3:] == [f"slurm://torchx/{i}" for i in ids], recent.stdout


def test_cli_run_log_on_slurm_waits_and_streams_as_in_0_7(slurm_env: Any, tmp_path: Path) -> None:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    run = _torchx(
        slurm_env,
        tmp_path,
        "run", "-s", "slurm", "-cfg", f"job_dir={tmp_path / 'job'}", "--workspace", "",
        "--log", "utils.sh", "echo from-the-job; exit 3",
    )  # fmt: skip
    # --log alone waits for the app: its lines, its end, and its exit code
    handle = run.stdout.splitlines()[0]
    assert re.fullmatch(r"slurm://torchx/\d+", handle), run.stdout
    assert "sh/0 from-the-job" in run.stderr.splitlines(), run.stderr
    assert f"{handle} FAILED: sh exited with 3" in run.stderr, run.stderr
    assert run.returncode == 1
