"""``torchx requeue`` on Slurm: a running job is requeued the way Slurm's own preemption
(``PreemptMode=REQUEUE``) requeues it, and counted as a preemption.

``scontrol requeue`` has slurmd send every process of the job SIGTERM, then SIGKILL after
``KillWait``: each replica's wrapper writes its exit record, and an app using
torchx.runtime.preemption checkpoints and exits. The batch shell dies of that SIGTERM
before its own requeue bookkeeping, so the requeue is written here into
``slurm-<job id>.requeues`` (the list the script keeps), first: the next attempt then
counts it as a requeue, not as a failure spending one of the roles' ``max_retries``,
and ``describe`` reports it as ``num_preemptions``. If Slurm refuses, the line is taken
back out.

Slurm then holds the job until a begin time ``cred_expire`` (AuthInfo, 120 s by default)
after the requeue, set once the job has left COMPLETING; ``scontrol update JobId=N
StartTime=now`` lifts it once the job is pending, so the job starts again as soon as
there is room.

A sweep's trial, the array task ``A_I``, is requeued alone (``scontrol requeue A_I``); its
script names its requeues file after ``A_I`` too. A trial started by an earlier version
names that file after the task's own job id: requeued here, its next attempt would not
see this requeue and would count it as a failure.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from datetime import datetime

from torchx.schedulers._api import DescribeAppResponse
from torchx.schedulers._errors import SchedulerError
from torchx.schedulers._slurm_commands import BACKEND, SlurmError, check_job_id, run, slurm_message
from torchx.schedulers._slurm_parse import _key_values, job_app_state, state_word
from torchx.schedulers._slurm_preemption import requeues_name
from torchx.specs import AppState, is_terminal

# How long ``requeue`` waits for the job to be pending again and its hold lifted; a
# job's processes get KillWait (30 s by default) to exit.
RELEASE_WAIT_S = 120.0
_AGAIN = "run it again; the app resumes if it reads its checkpoint"


def _show(app_id: str) -> list[dict[str, str]]:
    """Each component's ``scontrol show job -o`` fields, the lead component first; [] for a
    job Slurm does not know (any more)."""
    proc = run(["scontrol", "show", "job", "-o", app_id])
    if proc.returncode != 0:
        if "invalid job id" in (proc.stderr + proc.stdout).lower():
            return []
        raise SlurmError(f"scontrol show job {app_id} failed: {slurm_message(proc)}")
    jobs = [dict(_key_values(line)) for line in proc.stdout.splitlines() if line.strip()]
    return sorted(jobs, key=lambda f: int(f.get("HetJobOffset", "0") or 0))


def _state(jobs: list[dict[str, str]]) -> AppState:
    return job_app_state(
        {int(f.get("HetJobOffset", "0") or 0): f.get("JobState", "") for f in jobs}
    )


def _refuse(app_id: str, why: str, fix: str) -> SchedulerError:
    return SchedulerError(BACKEND, f"cannot requeue app {app_id}: {why}", fix)


def _check_requeueable(app_id: str, lead: dict[str, str], state: AppState) -> None:
    if "_" not in app_id and lead.get("ArrayJobId"):
        # an array job's own id (all its tasks) or a task's own job id: the trial's
        # requeues file, and what the user sees, is named after A_I
        task = f"{lead.get('ArrayJobId')}_{lead.get('ArrayTaskId')}"
        raise _refuse(
            app_id,
            f"it names a job of a sweep's array (Slurm array task {task}), not one trial",
            f"requeue one trial by its id, ARRAYJOB_INDEX (as {task}); "
            "`torchx status SWEEP_HANDLE` lists them",
        )
    slurm_state = lead.get("JobState", "")
    if is_terminal(state):
        raise _refuse(
            app_id,
            f"it has already ended ({state.name}, Slurm's {slurm_state}); only a running app "
            "can be requeued",
            _AGAIN,
        )
    if state_word(slurm_state) == "COMPLETING":
        raise _refuse(
            app_id, "it is ending (Slurm's COMPLETING); only a running app can be requeued", _AGAIN
        )
    if state != AppState.RUNNING:
        raise _refuse(
            app_id,
            f"it is {state.name} (Slurm's {slurm_state}, Reason={lead.get('Reason', '')}); "
            "only a running app can be requeued",
            "wait until it runs (`torchx status`)",
        )
    if lead.get("Requeue") == "0":
        raise _refuse(
            app_id,
            "Slurm says the job is not requeueable (Requeue=0: it was submitted with --no-requeue)",
            "submit it without --no-requeue in the run option 'sbatch_args'",
        )


def _record(path: str, line: str, app_id: str) -> int:
    """Appends ``line`` to ``path``; returns the size it had, to take the line back."""
    try:
        with open(path, "a", encoding="utf-8") as f:
            size = f.tell()
            f.write(line)
    except OSError as e:
        raise _refuse(
            app_id,
            f"cannot record the requeue in {path} ({e.strerror}); without that record the "
            "restart would spend one of the roles' max_retries",
            "run torchx where the job's directory (its WorkDir) can be written",
        ) from None
    return size


def _take_back(path: str, size: int) -> None:
    # the refusal that follows says what happened; a stale line would only miscount
    with contextlib.suppress(OSError):
        os.truncate(path, size)


def requeue_job(
    app_id: str, describe: Callable[[str], DescribeAppResponse | None]
) -> DescribeAppResponse | None:
    """Requeue the running job ``app_id`` as a preemption; None for a job Slurm does not
    know. Returns ``describe(app_id)`` once the job is pending again with its begin-time
    hold lifted (or running). A sweep's trial, the array task ``A_I``, is requeued alone.
    Refuses, in one line, an ended or pending job, an array named otherwise than by one
    task's ``A_I``, one Slurm will not requeue, and one whose requeue cannot be recorded."""
    check_job_id(app_id)
    jobs = _show(app_id)
    if not jobs:
        return None
    lead = jobs[0]
    _check_requeueable(app_id, lead, _state(jobs))
    restarts = int(lead["Restarts"]) if lead.get("Restarts", "").isdigit() else 0
    job_dir = lead.get("WorkDir") or os.path.dirname(lead.get("StdOut", ""))
    path = os.path.join(job_dir, requeues_name(app_id))
    # the attempt it stops, as the script writes its own requeues
    size = _record(path, f"preemption {restarts} requested\n", app_id)
    proc = run(["scontrol", "requeue", app_id])
    if proc.returncode != 0:
        _take_back(path, size)
        raise _refuse(
            app_id,
            f"Slurm refused `scontrol requeue {app_id}`: {slurm_message(proc)}",
            "see `scontrol show job " + app_id + "` (Requeue=1 is needed, and the job must run)",
        )
    _release(app_id, restarts)
    return describe(app_id)


def _later(slurm_time: str) -> bool:
    """Whether scontrol's StartTime (standard form, this machine's time zone) is still
    ahead; False for "Unknown" and anything else it cannot read."""
    try:
        return datetime.fromisoformat(slurm_time) > datetime.now()
    except ValueError:
        return False


def _release(app_id: str, restarts: int) -> None:
    """Waits (at most RELEASE_WAIT_S) for the requeued job to be pending, then lifts its
    begin-time hold; done once it waits for something else or runs again."""
    deadline = time.monotonic() + RELEASE_WAIT_S
    pending_since: float | None = None
    lifted_at = 0.0
    interval = 0.1
    while time.monotonic() < deadline:
        jobs = _show(app_id)
        if not jobs:
            return  # gone (purged or cancelled meanwhile): nothing to lift
        lead = jobs[0]
        state = _state(jobs)
        again = lead.get("Restarts", "").isdigit() and int(lead["Restarts"]) > restarts
        if state == AppState.PENDING and again:
            now = time.monotonic()
            # a reason not yet set by the scheduler hides the hold; StartTime shows it
            reason = lead.get("Reason", "")
            held = reason == "BeginTime" or (
                reason in ("", "None") and _later(lead.get("StartTime", ""))
            )
            if lifted_at and not held:
                return
            pending_since = pending_since or now
            # slurmd refuses to launch a job id within the wall-clock second of its kill,
            # which came before the job was pending: lift the hold a second later (and
            # again each second while Slurm shows it, as an early lift is overwritten).
            if now - pending_since >= 1.0 and now - lifted_at >= 1.0:
                run(["scontrol", "update", f"JobId={app_id}", "StartTime=now"])
                lifted_at = now
        elif again and (is_terminal(state) or state_word(lead.get("JobState", "")) == "RUNNING"):
            return  # running again (COMPLETING is still the stopped run), or ended meanwhile
        time.sleep(interval)
        interval = min(interval * 1.5, 0.5)
    raise SlurmError(
        f"app {app_id} was requeued, but its begin-time hold was not lifted within "
        f"{RELEASE_WAIT_S:.0f}s (the job did not come back to PENDING in time)",
        "it starts by itself once its begin time passes (AuthInfo cred_expire, 120 s by "
        f"default), or run `scontrol update JobId={app_id} StartTime=now` once it is pending",
    )
