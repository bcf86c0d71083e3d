"""What ``describe`` says of a Slurm job that ran more than once, ran out of time or was
killed, on the test Slurm cluster (tests/fixtures/slurm.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers import DescribeAppResponse, Stream
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, AppState, Role

WAIT_S = 120


@pytest.fixture
def slurm(slurm_env: Any) -> SlurmScheduler:
    return SlurmScheduler("test")


def _sh(script: str, name: str = "r") -> AppDef:
    return AppDef("attempts", [Role(name, image="", entrypoint="bash", args=["-c", script])])


def _until(
    slurm: SlurmScheduler, app_id: str, state: AppState, starter: Any = None
) -> DescribeAppResponse:
    deadline = time.monotonic() + WAIT_S
    desc = slurm.describe(app_id)
    while (desc is None or desc.state != state) and time.monotonic() < deadline:
        if starter is not None:
            starter.saw(desc is not None and desc.state == AppState.PENDING)
        time.sleep(0.5)
        desc = slurm.describe(app_id)
    assert desc is not None and desc.state == state, desc
    return desc


def test_a_requeued_job_shows_this_runs_replicas_and_counts_the_restart(
    slurm: SlurmScheduler, slurm_env: Any, tmp_path: Path
) -> None:
    # The first run fails; the second (after the requeue) runs until cancelled.
    app = _sh('if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then exit 1; fi; echo again; sleep 300')
    app_id = slurm.submit(app, {"job_dir": str(tmp_path)})
    first = slurm.wait(app_id, timeout=WAIT_S)
    assert first is not None and first.state == AppState.FAILED, first
    assert first.roles_statuses[0].replicas[0].exit_code == 1
    assert first.num_restarts == 0
    slurm_env.run("scontrol", "requeue", app_id)
    try:
        # A requeued job waits for its begin time; the test lets it start early.
        desc = _until(slurm, app_id, AppState.RUNNING, slurm_env.requeue_starter(app_id))
        (replica,) = desc.roles_statuses[0].replicas
        assert replica.state == AppState.RUNNING, desc
        assert replica.exit_code is None, desc
        assert "exited" not in desc.msg, desc
        assert desc.num_restarts == 1
    finally:
        slurm.cancel(app_id)


def test_a_job_id_seen_before_does_not_show_the_old_runs_exit_codes(
    slurm: SlurmScheduler, tmp_path: Path
) -> None:
    app_id = slurm.submit(_sh("sleep 300"), {"job_dir": str(tmp_path)})
    try:
        # What a job with this id wrote before a reset cluster gave the id out again.
        old = tmp_path / f"slurm-{app_id}-r-0.exit"
        old.write_text("1 node9\n")
        stale = time.time() - 3600
        os.utime(old, (stale, stale))
        desc = slurm.describe(app_id)
        assert desc is not None
        (replica,) = desc.roles_statuses[0].replicas
        assert replica.state != AppState.FAILED and replica.exit_code is None, desc
        _until(slurm, app_id, AppState.RUNNING)
        # Once it runs, its first attempt has cleared the old record.
        deadline = time.monotonic() + WAIT_S
        while old.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not old.exists()
    finally:
        slurm.cancel(app_id)


def test_a_time_limit_shows_as_timeout(slurm: SlurmScheduler, tmp_path: Path) -> None:
    # One minute is Slurm's smallest limit. The warning is asked for 50 s ahead (10 s into
    # the run), not at half time: slurmctld checks limits about every 30 s, and on a loaded
    # machine a warning due at 30 s could meet the limit's own check and never be sent.
    cfg = {"job_dir": str(tmp_path), "time": "1", "preempt_warning_seconds": 50}
    app_id = slurm.submit(_sh("sleep 600"), cfg)
    desc = slurm.wait(app_id, timeout=180)
    assert desc is not None and desc.state == AppState.FAILED, desc
    assert "TIMEOUT" in desc.msg, desc
    assert "143" not in desc.msg and "exited" not in desc.msg, desc
    # An app that exits on Slurm's SIGTERM before its wrapper is stopped too leaves the
    # record its wrapper writes then: Slurm's word still says why it ended.
    (tmp_path / f"slurm-{app_id}-r-0.exit").write_text("143 node1 0\n")
    desc = slurm.describe(app_id)
    assert desc is not None and desc.state == AppState.FAILED, desc
    assert desc.roles_statuses[0].replicas[0].exit_code == 143
    # The script stopped the app on the time limit's warning, and says so with the fix.
    assert desc.msg.endswith("r: TIMEOUT") and "give a longer time" in desc.msg, desc


def test_a_killed_replica_names_its_signal(slurm: SlurmScheduler, tmp_path: Path) -> None:
    # (``$$`` would be a macro escape: torchx turns it into ``$``.)
    app_id = slurm.submit(_sh("kill -KILL $BASHPID"), {"job_dir": str(tmp_path)})
    desc = slurm.wait(app_id, timeout=WAIT_S)
    files = {p.name: p.read_text() for p in tmp_path.iterdir() if p.is_file()}
    assert desc is not None and desc.state == AppState.FAILED, (desc, files)
    assert desc.roles_statuses[0].replicas[0].exit_code == 137, (desc, files)
    assert "SIGKILL" in desc.msg, desc


def test_without_a_workspace_the_cli_copies_the_current_directory(
    slurm_env: Any, tmp_path: Path
) -> None:
    torchx = Path(sys.executable).with_name("torchx")
    if not torchx.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    project = tmp_path / "project"
    project.mkdir()
    (project / "my_app.py").write_text("import os\nprint(sorted(os.listdir('.'))[:3])\n")
    (project / "secret.txt").write_text("x")
    (project / ".torchxignore").write_text("secret.txt\n")
    job_dir = tmp_path / "job"
    run = subprocess.run(
        [
            str(torchx), "run", "-s", "slurm", "-cfg",
            f"job_dir={job_dir},partition={slurm_env.partition}",
            "utils.sh", sys.executable, "my_app.py",
        ],
        env=slurm_env.env, cwd=project, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    app_id = run.stdout.strip().rsplit("/", 1)[-1]
    desc = SlurmScheduler().wait(app_id, timeout=WAIT_S)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert (job_dir / "my_app.py").exists()
    assert not (job_dir / "secret.txt").exists()


def test_a_failed_job_runs_again_while_retries_are_left(
    slurm: SlurmScheduler, slurm_env: Any, tmp_path: Path
) -> None:
    app = _sh('if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then exit 1; fi; echo second run')
    app.roles[0].max_retries = 1
    app_id = slurm.submit(app, {"job_dir": str(tmp_path)})
    deadline = time.monotonic() + WAIT_S
    desc = slurm.describe(app_id)
    # Slurm holds a requeued job for a couple of minutes (PENDING, Reason=BeginTime,
    # num_restarts already 1); the test lets it start early, but not within the second of
    # the kill.
    starter = slurm_env.requeue_starter(app_id)
    while (desc is None or desc.state != AppState.SUCCEEDED) and time.monotonic() < deadline:
        starter.saw(desc is not None and desc.state == AppState.PENDING)
        time.sleep(0.5)
        desc = slurm.describe(app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert desc.num_restarts == 1
    assert desc.roles_statuses[0].replicas[0].exit_code == 0
    # The log keeps every attempt, with the marker line before the second one in each
    # stream; both streams (the default) give stdout's, then stderr's.
    marker = "[torchx] attempt 2 of r/0 starts: restart 1 of the job\n"
    assert list(slurm.log_iter(app_id, "r", streams=Stream.STDOUT)) == [marker, "second run\n"]
    assert list(slurm.log_iter(app_id, "r")) == [marker, "second run\n", marker]
