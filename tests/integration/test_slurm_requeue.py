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
    'echo run $TORCHX_ATTEMPT; if [ "$TORCHX_ATTEMPT" = 2 ]; then exit 0; fi; '
    "trap 'echo saved $TORCHX_ATTEMPT; exit 75' TERM; while :; do sleep 0.1; done"
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
    app = AppDef("requeued", [Role("sh", image="", entrypoint="bash", args=["-c", APP])])
    job_dir = tmp_path / "job"
    handle = runner.run(app, "slurm", {"job_dir": str(job_dir), "partition": slurm_env.partition})
    app_id = handle.rsplit("/", 1)[-1]
    slurm = SlurmScheduler("test")
    out = job_dir / f"slurm-{app_id}-sh-0.out"
    try:
        wait_for_output(out, "run 0", lambda: slurm.describe(app_id))
        status = runner.requeue(handle)
        assert status is not None and status.num_preemptions == 1, status
        assert status.state in (AppState.PENDING, AppState.RUNNING), status
        # torchx lifted Slurm's begin-time hold before it returned
        shown = slurm_env.run("scontrol", "show", "job", "-o", app_id).stdout
        assert "Restarts=1 " in shown and "Reason=BeginTime" not in shown, shown
        # the job runs again without the test's help
        wait_for_output(out, "run 1", lambda: slurm.describe(app_id))
        desc = slurm.describe(app_id)
        assert desc is not None, desc
        assert (desc.num_preemptions, desc.num_restarts) == (1, 0), desc
        assert desc.roles_statuses[0].replicas[0].attempt == 2, desc
        proc = subprocess.run(
            [str(torchx), "requeue", handle], capture_output=True, text=True, timeout=WAIT_S
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"requeued {handle} (preemption 2); now "), proc.stdout
        desc = slurm.wait(app_id, timeout=WAIT_S)
        assert desc is not None and desc.state == AppState.SUCCEEDED, (desc, out.read_text())
        # two requeues, neither a retry (max_retries is 0): the app ran three times
        assert (desc.num_preemptions, desc.num_restarts) == (2, 0), desc
        (replica,) = desc.roles_statuses[0].replicas
        assert (replica.attempt, replica.exit_code) == (3, 0), desc
        text = out.read_text()
        for said in ("run 0", "saved 0", "run 1", "saved 1", "run 2"):
            assert said in text, text
        assert "[torchx] attempt 3 of sh/0 starts" in text, text
        assert (job_dir / f"slurm-{app_id}.requeues").read_text().splitlines() == [
            "preemption 0 requested",
            "preemption 1 requested",
        ]
        with pytest.raises(SchedulerError, match=r"already ended \(SUCCEEDED"):
            runner.requeue(handle)
    finally:
        slurm.cancel(app_id)
