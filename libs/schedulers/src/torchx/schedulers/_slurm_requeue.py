"""``torchx requeue`` on Slurm: a running job is requeued the way Slurm's own preemption
(``PreemptMode=REQUEUE``) requeues it, and counted as a preemption.

``scontrol requeue`` has slurmd send every process of the job SIGTERM, then SIGKILL after
``KillWait``: each replica's wrapper writes its exit record, and an app using
torchx.runtime.preemption checkpoints and exits. The batch shell dies of that SIGTERM
before its own requeue bookkeeping, so the request is recorded here first, in a file of
its own, ``slurm-<job id>.requested/<attempt>.<request>``: the next attempt then counts it
as a requeue, not as a failure spending one of the roles' ``max_retries``, and
``describe`` reports it as ``num_preemptions``. The file is this request's alone (the
script appends to its own ``.requeues`` at any moment, and another ``torchx requeue`` of
the same attempt, one Slurm may accept, writes its own), so a request Slurm refuses is
taken back by removing it; one stopped midway (Ctrl-C, or ``scontrol`` past its time
limit) is kept only if Slurm shows the job requeued.

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
import secrets
import subprocess
import time
from collections.abc import Callable
from datetime import datetime

from torchx.schedulers._api import DescribeAppResponse
from torchx.schedulers._errors import SchedulerError
from torchx.schedulers._slurm_commands import (
    BACKEND,
    SlurmError,
    SlurmTimeoutError,
    check_job_id,
    run,
    slurm_message,
)
from torchx.schedulers._slurm_parse import Component, job_app_state, state_word
from torchx.schedulers._slurm_preemption import request_name, requests_dir
from torchx.specs import AppState, is_terminal

# How long ``requeue`` waits for the job to be pending again and its hold lifted; a
# job's processes get KillWait (30 s by default) to exit.
RELEASE_WAIT_S = 120.0
# Slurm refusing to lift the hold this many times in a row (a second apart, the job still
# held) is its answer, said at once rather than after RELEASE_WAIT_S.
_LIFT_REFUSALS = 3
_AGAIN = "run it again; the app resumes if it reads its checkpoint"
_STARTS_ITSELF = (
    "it starts by itself once its begin time passes (AuthInfo cred_expire, 120 s by "
    "default), or run `scontrol update JobId={} StartTime=now` once it is pending"
)

# ``SlurmScheduler._scontrol``: a job's components by offset; {} for a job Slurm does not
# know (any more).
Show = Callable[[str], dict[int, Component]]


def _lead(comps: dict[int, Component]) -> Component:
    return comps[min(comps)]


def _state(comps: dict[int, Component]) -> AppState:
    return job_app_state({offset: c.state for offset, c in comps.items()})


def _refuse(app_id: str, why: str, fix: str) -> SchedulerError:
    return SchedulerError(BACKEND, f"cannot requeue app {app_id}: {why}", fix)


def _check_requeueable(app_id: str, lead: Component, state: AppState) -> None:
    if "_" not in app_id and lead.array_task:
        # an array job's own id (all its tasks) or a task's own job id: the trial's
        # requeues file, and what the user sees, is named after A_I
        task = lead.array_task
        raise _refuse(
            app_id,
            f"it names a job of a sweep's array (Slurm array task {task}), not one trial",
            f"requeue one trial by its id, ARRAYJOB_INDEX (as {task}); "
            "`torchx status SWEEP_HANDLE` lists them",
        )
    slurm_state = lead.state
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
            f"it is {state.name} (Slurm's {slurm_state}, Reason={lead.reason}); "
            "only a running app can be requeued",
            "wait until it runs (`torchx status`)",
        )
    if lead.requeue == "0":
        raise _refuse(
            app_id,
            "Slurm says the job is not requeueable (Requeue=0: it was submitted with --no-requeue)",
            "submit it without --no-requeue in the run option 'sbatch_args'",
        )


def _record(path: str, line: str, app_id: str) -> None:
    """Writes torchx's record of the request, ``line``, as the new file ``path``; refused,
    it leaves no file of its own (and removes none it did not create)."""
    created = False
    try:
        with open(path, "x", encoding="utf-8") as f:
            created = True
            f.write(line)
    except OSError as e:
        if created:  # a full disk, say: no part of a record is left
            _forget(path)
        raise _unrecordable(app_id, path, e) from None


def _unrecordable(app_id: str, path: str, e: OSError) -> SchedulerError:
    return _refuse(
        app_id,
        f"cannot record the requeue in {path} ({e.strerror}); without that record the "
        "restart would spend one of the roles' max_retries",
        "run torchx where the job's directory (its WorkDir) can be written",
    )


def _make_folders(job_dir: str, folder: str, path: str, app_id: str) -> None:
    """Creates the job's request folder (``folder``, relative) inside the existing
    ``job_dir``, never the job directory itself; left in place once made (another request
    may be writing into it), a submit under the id removes it."""
    where = job_dir
    for part in folder.split("/"):
        where = os.path.join(where, part)
        try:
            os.mkdir(where)
        except FileExistsError:
            pass
        except OSError as e:
            raise _unrecordable(app_id, path, e) from None


def _forget(path: str) -> None:
    # the error that follows says what happened; a stale record would only miscount
    with contextlib.suppress(OSError):
        os.remove(path)


def requeue_job(
    app_id: str, show: Show, describe: Callable[[str], DescribeAppResponse | None]
) -> DescribeAppResponse | None:
    """Requeue the running job ``app_id`` as a preemption; None for a job Slurm does not
    know. Returns ``describe(app_id)`` once the job is pending again with its begin-time
    hold lifted (or running). A sweep's trial, the array task ``A_I``, is requeued alone.
    Refuses, in one line, an ended or pending job, an array named otherwise than by one
    task's ``A_I``, one Slurm will not requeue, and one whose requeue cannot be recorded;
    an error once the job was requeued starts "app N was requeued, but"."""
    check_job_id(app_id)
    comps = show(app_id)
    if not comps:
        return None
    lead = _lead(comps)
    _check_requeueable(app_id, lead, _state(comps))
    restarts = lead.restarts or 0
    job_dir = lead.workdir or os.path.dirname(lead.stdout)
    # named after the attempt it stops, as the script's own lines are, and this request
    request = secrets.token_hex(6)
    folder = requests_dir(app_id)
    path = os.path.join(job_dir, folder, request_name(restarts, request))
    proc = _requeue(app_id, restarts, job_dir, folder, path, show)
    if proc is not None and proc.returncode != 0:
        _forget(path)
        raise _refuse(
            app_id,
            f"Slurm refused `scontrol requeue {app_id}`: {slurm_message(proc)}",
            "see `scontrol show job " + app_id + "` (Requeue=1 is needed, and the job must run)",
        )
    try:
        _release(app_id, restarts, show)
        return describe(app_id)
    except SchedulerError as e:
        if e.reason.startswith(_requeued_but(app_id)):
            raise
        # whatever its own fix, running requeue again is not it: the job is queued
        raise SchedulerError(
            BACKEND, f"{_requeued_but(app_id)}then {e.reason}", _STARTS_ITSELF.format(app_id)
        ) from None


def _requeued_but(app_id: str) -> str:
    return f"app {app_id} was requeued, but "


def _requeue(
    app_id: str, restarts: int, job_dir: str, folder: str, path: str, show: Show
) -> subprocess.CompletedProcess[str] | None:
    """Records the request as ``path``, then returns ``scontrol requeue``'s answer; None
    where it was stopped at its time limit yet Slurm shows the job requeued. Stopped any
    other way (Ctrl-C), or not requeued, the record is removed unless Slurm shows the job
    requeued, and the stop goes on."""
    asked = False
    try:
        _make_folders(job_dir, folder, path, app_id)
        _record(path, f"preemption {restarts} requested\n", app_id)
        asked = True
        return run(["scontrol", "requeue", app_id])
    except BaseException as stopped:
        if not asked:  # nothing was asked of Slurm; _record's own refusal left no file
            if not isinstance(stopped, SchedulerError):
                _forget(path)  # a Ctrl-C once the file (this request's alone) was made
            raise
        requeued = _requeued_anyway(app_id, restarts, show)
        if requeued is False:
            _forget(path)
        if not isinstance(stopped, SlurmTimeoutError):
            raise
        if requeued:
            return None
        if requeued is False:
            raise SlurmError(
                f"{stopped.reason}; the job was not requeued ({restarts} restarts, as before)",
                "check that slurmctld answers (`scontrol ping`), then run it again",
            ) from None
        raise SlurmError(
            f"{stopped.reason}; whether the job was requeued is not known, so torchx keeps "
            f"its record of the request, {path}",
            f"remove that file if `scontrol show job {app_id}` still shows Restarts={restarts}",
        ) from None


def _requeued_anyway(app_id: str, restarts: int, show: Show) -> bool | None:
    """Whether Slurm shows the job requeued (its Restarts past ``restarts``, as scontrol
    requeue counts it at once); None where Slurm cannot say."""
    try:
        comps = show(app_id)
    except (SchedulerError, KeyboardInterrupt):  # a second Ctrl-C: leave the record be
        return None
    if not comps or _lead(comps).restarts is None:
        return None
    return (_lead(comps).restarts or 0) > restarts


def _later(slurm_time: str) -> bool:
    """Whether scontrol's StartTime (standard form, this machine's time zone) is still
    ahead; False for "Unknown" and anything else it cannot read."""
    try:
        return datetime.fromisoformat(slurm_time) > datetime.now()
    except ValueError:
        return False


def _release(app_id: str, restarts: int, show: Show) -> None:
    """Waits (at most RELEASE_WAIT_S) for the requeued job to be pending, then lifts its
    begin-time hold; done once it waits for something else or runs again."""
    deadline = time.monotonic() + RELEASE_WAIT_S
    pending_since: float | None = None
    lifted_at = 0.0
    interval = 0.1
    refusals: list[str] = []
    while True:  # polled at least once, however late it starts, so the error says what it saw
        comps = show(app_id)
        if not comps:
            return  # gone (purged or cancelled meanwhile): nothing to lift
        lead = _lead(comps)
        state = _state(comps)
        seen = f"{lead.state}, Reason={lead.reason}"
        again = lead.restarts is not None and lead.restarts > restarts
        if state == AppState.PENDING and again:
            now = time.monotonic()
            # a reason not yet set by the scheduler hides the hold; StartTime shows it
            held = lead.reason == "BeginTime" or (
                lead.reason in ("", "None") and _later(lead.begin)
            )
            if lifted_at and not held:
                return
            pending_since = pending_since or now
            # slurmd refuses to launch a job id within the wall-clock second of its kill,
            # which came before the job was pending: lift the hold a second later (and
            # again each second while Slurm shows it, as an early lift is overwritten).
            if now - pending_since >= 1.0 and now - lifted_at >= 1.0:
                proc = run(["scontrol", "update", f"JobId={app_id}", "StartTime=now"])
                refusals = [*refusals, slurm_message(proc)] if proc.returncode else []
                if len(refusals) >= _LIFT_REFUSALS:
                    raise SlurmError(
                        f"{_requeued_but(app_id)}Slurm refused to lift its begin-time hold "
                        f"(`scontrol update JobId={app_id} StartTime=now`, {len(refusals)} "
                        f"times): {refusals[-1]} (it is {seen})",
                        _STARTS_ITSELF.format(app_id),
                    )
                lifted_at = now
        elif again and (is_terminal(state) or state_word(lead.state) == "RUNNING"):
            return  # running again (COMPLETING is still the stopped run), or ended meanwhile
        if time.monotonic() >= deadline:
            break
        time.sleep(interval)
        interval = min(interval * 1.5, 0.5)
    refused = f"; Slurm refused StartTime=now: {refusals[-1]}" if refusals else ""
    raise SlurmError(
        f"{_requeued_but(app_id)}its begin-time hold was not lifted within "
        f"{RELEASE_WAIT_S:g} s (RELEASE_WAIT_S; it is {seen}{refused})",
        _STARTS_ITSELF.format(app_id),
    )
