"""Requeues of sweep trials (Slurm array tasks) on the test Slurm cluster
(tests/fixtures/slurm.py): a trial that asks to run again (exit 75) and one requeued with
``Runner.requeue`` each run again under the trial's own handle, are counted as
preemptions, and spend none of the roles' ``max_retries`` (0 here)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from torchx.runner import Sweep, get_runner
from torchx.schedulers import DescribeAppResponse
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppState, is_terminal

WAIT_S = 240

# Trial "asks": its first attempt asks to run again, the second finishes. Trial "waits":
# runs until warned (SIGTERM), then "checkpoints" and asks to run again; the second
# attempt finishes.
COMPONENT = '''
import torchx.specs as specs


def trial(kind: str) -> specs.AppDef:
    """One role that asks for a requeue in its first attempt.

    Args:
        kind: asks (at once) or waits (once warned)
    """
    script = (
        "trap 'echo saved $TORCHX_ATTEMPT; exit 75' TERM; echo run $TORCHX_ATTEMPT; "
        'if [ "$TORCHX_ATTEMPT" != 0 ]; then exit 0; fi; '
        f'if [ {kind} = asks ]; then exit 75; fi; while :; do sleep 0.1; done'
    )
    return specs.AppDef("trial", roles=[specs.Role("t", image=".", entrypoint="bash",
                                                   args=["-c", script])])
'''


def _wait_for_output(out: Path, text: str, what: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not (out.exists() and text in out.read_text(errors="replace")):
        assert time.monotonic() < deadline, (text, what())
        time.sleep(0.2)


def _wait_ended(slurm: SlurmScheduler, cluster: Any, app_id: str) -> DescribeAppResponse:
    """The trial's final state, letting its requeue start soon after it is pending."""
    deadline = time.monotonic() + WAIT_S
    starter = cluster.requeue_starter(app_id)
    while True:
        desc = slurm.describe(app_id)
        if desc is not None and is_terminal(desc.state):
            return desc
        assert time.monotonic() < deadline, desc
        starter.saw(desc is not None and desc.state == AppState.PENDING)
        time.sleep(0.5)


def _check_ended(desc: DescribeAppResponse, job_dir: Path, app_id: str) -> None:
    """Ended after one requeue, counted as a preemption: its second attempt succeeded."""
    text = (job_dir / f"slurm-{app_id}-t-0.out").read_text(errors="replace")
    assert desc.state == AppState.SUCCEEDED, (desc, text)
    assert (desc.num_preemptions, desc.num_restarts) == (1, 0), (desc, text)
    (replica,) = desc.roles_statuses[0].replicas
    assert (replica.attempt, replica.exit_code) == (2, 0), desc
    assert "run 0" in text and "run 1" in text, text


def test_a_trial_that_asks_and_a_requeued_trial_count_preemptions_not_retries(
    slurm_env: Any, tmp_path: Path
) -> None:
    (tmp_path / "comp.py").write_text(COMPONENT)
    job_dir = tmp_path / "job"
    runner = get_runner("test")
    sweep = Sweep.grid(f"{tmp_path}/comp.py:trial", {"kind": ["asks", "waits"]})
    handle = runner.run_sweep(
        sweep, "slurm", cfg={"job_dir": str(job_dir), "partition": slurm_env.partition}
    )
    trials = runner.sweep_status(handle).trials
    asks, waits = (t.handle or "" for t in trials)
    asks_id, waits_id = (h.rsplit("/", 1)[-1] for h in (asks, waits))
    assert asks_id.endswith("_0") and waits_id.endswith("_1"), (asks_id, waits_id)
    slurm = SlurmScheduler("test")
    try:
        desc = _wait_ended(slurm, slurm_env, asks_id)
        _check_ended(desc, job_dir, asks_id)
        out = job_dir / f"slurm-{waits_id}-t-0.out"
        _wait_for_output(out, "run 0", lambda: slurm.describe(waits_id))
        status = runner.requeue(waits)
        assert status is not None and status.num_preemptions == 1, status
        # its second attempt may have run (and ended) already
        assert status.state in (AppState.PENDING, AppState.RUNNING, AppState.SUCCEEDED), status
        # torchx lifted Slurm's begin-time hold of this task alone before it returned
        shown = slurm_env.run("scontrol", "show", "job", "-o", waits_id).stdout
        assert "Restarts=1 " in shown and "Reason=BeginTime" not in shown, shown
        _check_ended(_wait_ended(slurm, slurm_env, waits_id), job_dir, waits_id)
        # that requeue was of trial 1 alone (Slurm requeues ended tasks of an array too)
        asks_now = slurm.describe(asks_id)
        assert asks_now is not None, asks_id
        _check_ended(asks_now, job_dir, asks_id)
        # each trial's requeue is listed under the trial's own id
        assert (job_dir / f"slurm-{asks_id}.requeues").read_text() == "time_limit 0\n"
        assert (job_dir / f"slurm-{waits_id}.requeues").read_text() == ("preemption 0 requested\n")
        final = runner.wait_sweep(handle, 0.5, timeout=WAIT_S)
        assert final.state == AppState.SUCCEEDED, final.format()
    finally:
        slurm.cancel(asks_id.split("_")[0])
