"""Preemption on the test Slurm cluster (tests/fixtures/slurm.py): examples/train, warned
mid-run as a preemption does (``scancel --signal=USR1 --batch``), checkpoints, is requeued
under the same job id and ends with the weights of an uninterrupted run; ``dist.ddp -j 2x1``
on the two test nodes is warned on both replicas and resumes with the same world size; an app
that keeps asking for a requeue past ``max_time_requeues`` ends FAILED with the reason; a
sweep's trial (an array task) that asks for a requeue, and one requeued with
``Runner.requeue``, count a preemption, not a retry, under the trial's own id; an app
with a time limit and no ``preempt_warning_seconds`` runs up to its limit, as in 0.7.

Slurm holds a requeued job for ``cred_expire`` (120 s) before it may start again; the tests
lift that hold once the job is pending (``start_now_if_requeued``) so that they wait for
the requeue itself, not for the clock."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from torchx.runner import Sweep, get_runner
from torchx.schedulers import DescribeAppResponse
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, AppState, CfgVal, Role, is_terminal

WAIT_S = 240


def job_files(job_dir: Path) -> dict[str, str]:
    return {p.name: p.read_text(errors="replace")[-3000:] for p in job_dir.glob("slurm-*")}


def wait_through_requeues(slurm: SlurmScheduler, cluster: Any, app_id: str) -> DescribeAppResponse:
    """The job's final state, letting each requeue start soon after the job is pending."""
    deadline = time.monotonic() + WAIT_S
    starter = cluster.requeue_starter(app_id)
    while True:
        desc = slurm.describe(app_id)
        if desc is not None and is_terminal(desc.state):
            return desc
        assert time.monotonic() < deadline, desc
        starter.saw(desc is not None and desc.state == AppState.PENDING)
        time.sleep(0.5)


def wait_for(path: Path, what: Any, text: str = "") -> None:
    """Until ``path`` exists (and holds ``text``)."""
    deadline = time.monotonic() + WAIT_S
    while not path.exists() or (text and text not in path.read_text(errors="replace")):
        assert time.monotonic() < deadline, what()
        time.sleep(0.2)


@pytest.mark.slow
def test_a_warned_job_checkpoints_is_requeued_and_ends_with_uninterrupted_weights(
    slurm_env: Any, tmp_path: Path, train_run: Any
) -> None:
    train_run.start_reference()
    job_dir, ckpt = tmp_path / "job", tmp_path / "requeued"
    role = Role("trainer", image="", entrypoint=sys.executable, args=train_run.args(ckpt, 0.05))
    slurm = SlurmScheduler("test")
    app_id = slurm.submit(
        AppDef("train", [role]), {"job_dir": str(job_dir), "partition": slurm_env.partition}
    )
    try:
        wait_for(ckpt / "step_000020.pt", lambda: (slurm.describe(app_id), job_files(job_dir)))
        slurm_env.run("scancel", "--signal=USR1", "--batch", app_id)
        desc = wait_through_requeues(slurm, slurm_env, app_id)
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
    train_run.assert_same_weights(train_run.reference(), ckpt)


@pytest.mark.slow
def test_every_replica_of_a_ddp_app_is_warned_and_it_resumes_with_the_same_world_size(
    slurm_env: Any, tmp_path: Path, train_run: Any, free_port: int
) -> None:
    job_dir, ckpt = tmp_path / "job", tmp_path / "ckpt"
    script, *script_args = train_run.args(ckpt, 0.05)
    runner = get_runner()
    handle = runner.run_component(
        "dist.ddp",
        ["--j", "2x1", "--cpu", "1", "--memMB", "600", "--rdzv_port", str(free_port),
         "--env", "OMP_NUM_THREADS=1", "--script", script, "--", *script_args],
        scheduler="slurm",
        cfg={"job_dir": str(job_dir), "partition": slurm_env.partition},
    )  # fmt: skip
    app_id = handle.rsplit("/", 1)[-1]
    slurm = SlurmScheduler("test")
    try:
        wait_for(ckpt / "step_000020.pt", lambda: (slurm.describe(app_id), job_files(job_dir)))
        slurm_env.run("scancel", "--signal=USR1", "--batch", app_id)
        desc = wait_through_requeues(slurm, slurm_env, app_id)
        files = job_files(job_dir)
        assert desc.state == AppState.SUCCEEDED, (desc, files)
        assert (desc.num_preemptions, desc.num_restarts) == (1, 0), (desc, files)
        (role,) = desc.roles_statuses
        assert [(r.attempt, r.exit_code) for r in role.replicas] == [(2, 0), (2, 0)], desc
        firsts, seconds = "", ""
        for k in (0, 1):
            out = (job_dir / f"slurm-{app_id}-{role.role}-{k}.out").read_text()
            first, marker, second = out.partition(f"[torchx] attempt 2 of {role.role}/{k} starts")
            assert marker, files
            # the warning reached this replica in the first attempt only
            assert f"[torchx] {role.role}/{k} was warned (SIGTERM)" in first, files
            assert "was warned" not in second, files
            firsts, seconds = firsts + first, seconds + second
        # global rank 0 (on either node: c10d ranks by arrival) saved once and resumed
        assert firsts.count(": warned, saved") == 1 and "resumed from " in seconds, files
        (done,) = [line for line in seconds.splitlines() if "done {" in line]
        result = json.loads(done.split("done ", 1)[1])
        assert (result["world_size"], result["attempt"]) == (2, 1), done
        assert result["step"] == train_run.steps
    finally:
        slurm.cancel(app_id)


def run_bash_to_end(
    cluster: Any, job_dir: Path, name: str, script: str, **cfg: CfgVal
) -> tuple[str, DescribeAppResponse, dict[str, str]]:
    """Submit ``bash -c SCRIPT`` (role ``r``) and follow it through its requeues: its id,
    final state and job files; cancelled whatever happens."""
    role = Role("r", image="", entrypoint="bash", args=["-c", script])
    slurm = SlurmScheduler("test")
    cfg = {"job_dir": str(job_dir), "partition": cluster.partition, **cfg}
    app_id = slurm.submit(AppDef(name, [role]), cfg)
    try:
        return app_id, wait_through_requeues(slurm, cluster, app_id), job_files(job_dir)
    finally:
        slurm.cancel(app_id)


@pytest.mark.slow
def test_an_app_with_a_time_limit_runs_up_to_it_unwarned_by_default(
    slurm_env: Any, tmp_path: Path
) -> None:
    # A 0.7 app (no preemption API) with 30 s of work in a 60 s limit: no --signal is
    # asked by default, so nothing stops it early (a warning half way, plus Slurm's
    # minute of resolution, used to SIGTERM it within its first 30 s).
    app_id, desc, files = run_bash_to_end(
        slurm_env, tmp_path, "unwarned", "sleep 30; echo done", time="1"
    )
    assert desc.state == AppState.SUCCEEDED, (desc, files)
    assert "done" in files[f"slurm-{app_id}-r-0.out"], files


@pytest.mark.slow
def test_past_the_cap_a_time_limit_requeue_ends_failed_with_the_reason(
    slurm_env: Any, tmp_path: Path
) -> None:
    # An app that asks for a requeue by itself (exit 75) counts as reaching its time limit.
    _, desc, files = run_bash_to_end(
        slurm_env, tmp_path, "capped", "echo run $TORCHX_ATTEMPT; exit 75", max_time_requeues=1
    )
    assert desc.state == AppState.FAILED, (desc, files)
    assert "after 1 time-limit requeue(s)" in desc.msg, (desc, files)
    assert "'max_time_requeues' (1)" in desc.msg
    assert (desc.num_preemptions, desc.num_restarts) == (1, 0), desc
    # this attempt's own exit record, never the previous run's
    (replica,) = desc.roles_statuses[0].replicas
    assert replica.exit_code == 75 and replica.attempt == 2, desc


# Trial "asks": its first attempt asks to run again, the second finishes. Trial "waits":
# runs until warned (SIGTERM), then "checkpoints" and asks to run again; the second
# attempt finishes.
TRIAL = '''
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


def _check_ended(desc: DescribeAppResponse, job_dir: Path, app_id: str) -> None:
    """Ended after one requeue, counted as a preemption: its second attempt succeeded."""
    text = (job_dir / f"slurm-{app_id}-t-0.out").read_text(errors="replace")
    assert desc.state == AppState.SUCCEEDED, (desc, text)
    assert (desc.num_preemptions, desc.num_restarts) == (1, 0), (desc, text)
    (replica,) = desc.roles_statuses[0].replicas
    assert (replica.attempt, replica.exit_code) == (2, 0), desc
    assert "run 0" in text and "run 1" in text, text


@pytest.mark.slow
def test_trials_requeues_count_as_preemptions_not_retries(slurm_env: Any, tmp_path: Path) -> None:
    (tmp_path / "comp.py").write_text(TRIAL)
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
        desc = wait_through_requeues(slurm, slurm_env, asks_id)
        _check_ended(desc, job_dir, asks_id)
        out = job_dir / f"slurm-{waits_id}-t-0.out"
        wait_for(out, lambda: slurm.describe(waits_id), "run 0")
        status = runner.requeue(waits)
        assert status is not None and status.num_preemptions == 1, status
        # its second attempt may have run (and ended) already
        assert status.state in (AppState.PENDING, AppState.RUNNING, AppState.SUCCEEDED), status
        # torchx lifted Slurm's begin-time hold of this task alone before it returned
        shown = slurm_env.run("scontrol", "show", "job", "-o", waits_id).stdout
        assert "Restarts=1 " in shown and "Reason=BeginTime" not in shown, shown
        _check_ended(wait_through_requeues(slurm, slurm_env, waits_id), job_dir, waits_id)
        # that requeue was of trial 1 alone (Slurm requeues ended tasks of an array too)
        asks_now = slurm.describe(asks_id)
        assert asks_now is not None, asks_id
        _check_ended(asks_now, job_dir, asks_id)
        # each trial's requeue is listed under the trial's own id: the one it asked for in
        # its requeues, torchx's in a record of its own
        assert (job_dir / f"slurm-{asks_id}.requeues").read_text() == "time_limit 0\n"
        array, task = waits_id.split("_")
        (record,) = job_dir.glob(f"slurm-{array}.requested/{task}/0.*")
        assert record.read_text() == "preemption 0 requested\n"
        assert not (job_dir / f"slurm-{waits_id}.requeues").exists()
        final = runner.wait_sweep(handle, 0.5, timeout=WAIT_S)
        assert final.state == AppState.SUCCEEDED, final.format()
    finally:
        slurm.cancel(asks_id.split("_")[0])
