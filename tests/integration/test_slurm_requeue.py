"""``Runner.requeue`` and ``torchx requeue`` on the test Slurm cluster (tests/fixtures/slurm.py):
a running job is warned, stops and runs again under the same handle, counted as a
preemption (not a retry); an ended job is refused in one line."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from torchx.runner import get_runner
from torchx.schedulers import SchedulerError
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, AppState, Role

WAIT_S = 240
# Each attempt says which it is; warned (SIGTERM), the first two "checkpoint" and ask to
# run again (exit 75); the third finishes.
APP = (
    "trap 'echo saved $TORCHX_ATTEMPT; exit 75' TERM; echo run $TORCHX_ATTEMPT; "
    'if [ "$TORCHX_ATTEMPT" = 2 ]; then exit 0; fi; while :; do sleep 0.1; done'
)


def wait_for_output(out: Path, text: str, what: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not (out.exists() and text in out.read_text(errors="replace")):
        assert time.monotonic() < deadline, (text, what())
        time.sleep(0.2)


def test_a_running_job_is_requeued_as_a_preemption_and_an_ended_one_is_refused(
    slurm_env: Any, tmp_path: Path
) -> None:
    torchx = Path(sys.executable).with_name("torchx")
    runner = get_runner("test")
    # two roles: one heterogeneous job, whose components are requeued and start together
    roles = [Role(name, image="", entrypoint="bash", args=["-c", APP]) for name in ("sh", "peer")]
    app = AppDef("requeued", roles)
    job_dir = tmp_path / "job"
    cfg = {"job_dir": str(job_dir), "partition": slurm_env.partition}
    handle = runner.run(app, "slurm", cfg)
    app_id = handle.rsplit("/", 1)[-1]
    # one submitted not requeueable, running beside it
    fixed_dir = tmp_path / "fixed"
    fixed_cfg = {**cfg, "job_dir": str(fixed_dir), "sbatch_args": ["--no-requeue"]}
    fixed = runner.run(AppDef("fixed", roles[:1]), "slurm", fixed_cfg)
    fixed_id = fixed.rsplit("/", 1)[-1]
    slurm = SlurmScheduler("test")
    outs = {role: job_dir / f"slurm-{app_id}-{role}-0.out" for role in ("sh", "peer")}
    try:
        for role in ("sh", "peer"):  # both trap the warning before they say so
            wait_for_output(outs[role], "run 0", lambda: slurm.describe(app_id))
        wait_for_output(fixed_dir / f"slurm-{fixed_id}-sh-0.out", "run 0", lambda: fixed_id)
        with pytest.raises(SchedulerError, match=r"not requeueable \(Requeue=0") as e:
            runner.requeue(fixed)
        assert "\n" not in str(e.value) and "--no-requeue" in str(e.value), e.value
        slurm.cancel(fixed_id)
        status = runner.requeue(handle)
        assert status is not None and status.num_preemptions == 1, status
        assert "Num Preemptions: 1" in status.format(), status.format()
        assert status.state in (AppState.PENDING, AppState.RUNNING), status
        # torchx lifted Slurm's begin-time hold before it returned
        shown = slurm_env.run("scontrol", "show", "job", "-o", app_id).stdout
        assert "Restarts=1 " in shown and "Reason=BeginTime" not in shown, shown
        # the job runs again without the test's help
        for role in ("sh", "peer"):
            wait_for_output(outs[role], "run 1", lambda: slurm.describe(app_id))
        desc = slurm.describe(app_id)
        assert desc is not None, desc
        assert (desc.num_preemptions, desc.num_restarts) == (1, 0), desc
        assert [r.replicas[0].attempt for r in desc.roles_statuses] == [2, 2], desc
        proc = subprocess.run(
            [str(torchx), "requeue", handle], capture_output=True, text=True, timeout=WAIT_S
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"requeued {handle} (preemption 2); now "), proc.stdout
        desc = slurm.wait(app_id, timeout=WAIT_S)
        assert desc is not None and desc.state == AppState.SUCCEEDED, (desc, outs["sh"].read_text())
        # two requeues, neither a retry (max_retries is 0): the app ran three times
        assert (desc.num_preemptions, desc.num_restarts) == (2, 0), desc
        replicas = [
            (r.role, r.replicas[0].attempt, r.replicas[0].exit_code) for r in desc.roles_statuses
        ]
        assert replicas == [("sh", 3, 0), ("peer", 3, 0)], desc
        for role in ("sh", "peer"):
            text = outs[role].read_text()
            for said in ("run 0", "saved 0", "run 1", "saved 1", "run 2"):
                assert said in text, (role, text)
            assert f"[torchx] attempt 3 of {role}/0 starts" in text, text
        # torchx's records, one file a request; the job asked for no requeue of its own
        for attempt in (0, 1):
            (record,) = job_dir.glob(f"slurm-{app_id}.requested/{attempt}.*")
            assert record.read_text() == f"preemption {attempt} requested\n"
        assert not (job_dir / f"slurm-{app_id}.requeues").exists()
        with pytest.raises(SchedulerError, match=r"already ended \(SUCCEEDED"):
            runner.requeue(handle)
        proc = subprocess.run([str(torchx), "requeue", handle], capture_output=True, text=True)
        assert proc.returncode != 0 and "already ended (SUCCEEDED" in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    finally:
        slurm.cancel(app_id)
        slurm.cancel(fixed_id)
