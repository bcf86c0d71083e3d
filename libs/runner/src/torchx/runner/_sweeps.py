"""Submitting a sweep and answering for it by one handle (``SCHEDULER://SESSION/sweep-ID``).

Four ways to run the trials, chosen by the scheduler:

- **array** (Slurm): the first trial is dry-run as an app of its own, and every trial's
  commands join that request as ONE ``sbatch --array`` job
  (``torchx.schedulers.slurm_array``); Slurm itself keeps at most ``parallel`` tasks
  running, and one ``sacct`` describes them all.
- **indexed** (Kubernetes 1.29+, single-replica trials): ONE Indexed Job whose pods pick
  their trial's command and environment by completion index
  (``torchx.schedulers.kubernetes_indexed``); the Job keeps at most ``parallel`` pods
  running, and one pod list call by the sweep's label describes every trial.
- **local group** (local_cwd, local_dir): every trial is an app of its own, all submitted
  at once to ONE supervised group (``LocalScheduler.schedule_group``), a process that
  runs at most ``parallel`` of them at a time.
- **group** (every other scheduler): a small detached process (``_sweep_group``) submits
  one app per trial through the runner, keeping at most ``parallel`` of them running.

Either way each trial is the component called with its arguments, its roles carry
``TORCHX_SWEEP_ID``, ``TORCHX_SWEEP_INDEX``, ``TORCHX_SWEEP_ARGS`` (JSON) and
``TORCHX_SWEEP_ARG_<NAME>``, and the trackers record the sweep as its parent run.

This module answers for a sweep by its handle: it submits, reads, waits on, cancels and
resumes it. ``_sweep_plan`` plans it, ``_sweep_status`` reads its trials' states and
``_sweep_processes`` starts and watches a group's local processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

# ``NAME as NAME``: kept importable from here, where callers and tests import them.
from torchx.runner._sweep import ENV_SWEEP_ID as ENV_SWEEP_ID
from torchx.runner._sweep import ENV_SWEEP_INDEX as ENV_SWEEP_INDEX
from torchx.runner._sweep_kubernetes import delete_trials, is_kubernetes
from torchx.runner._sweep_lock import busy, changing, resumer, resuming
from torchx.runner._sweep_plan import ARRAY_BACKENDS as ARRAY_BACKENDS
from torchx.runner._sweep_plan import SweepPlan, new_sweep_id, plan, sweep_of
from torchx.runner._sweep_plan import trial_app as trial_app
from torchx.runner._sweep_processes import (
    await_exit,
    call_off_local_group,
    driver_alive,
    open_local_group,
    start_group,
    start_local_group,
)
from torchx.runner._sweep_record import SweepRecord, is_sweep_id, load, save
from torchx.runner._sweep_status import SweepStatus, TrialStatus, status_of, trial_handle
from torchx.runner._sweep_status import _overall as _overall
from torchx.runner._sweep_status import _started as _started
from torchx.specs import AppState, SpecsError, is_terminal, parse_app_handle
from torchx.util.notes import add_note

if TYPE_CHECKING:
    from torchx.runner._runner import Runner

# How long a waiter trusts a driver's pid before it looks again that the pid is still the
# driver's (a pid is reused once its process is gone).
_DRIVER_RECHECK_S = 1.0


def run(runner: Runner, scheduler: str, parallel: int, plan_for: Callable[[str], SweepPlan]) -> str:
    """Plan a new sweep on ``scheduler`` (``plan_for(its new id)``) and submit it; returns
    its handle.

    A local group's process, running ``parallel`` trials at once, is started first
    (``open_local_group``), so that its interpreter starts while the trials are planned
    rather than after: it is told the trials once every one's files are written and the
    record names them. Should planning or submitting fail before, it is called off:
    nothing of the sweep is left (no process, record, log or app). Once told, the sweep
    is submitted: an interrupt then leaves it running, recorded, its log kept, and a note
    on the interrupt names the sweep."""
    sweep_id = new_sweep_id()
    group = open_local_group(runner, scheduler, sweep_id, parallel)
    p: SweepPlan | None = None
    try:
        p = plan_for(sweep_id)
        return _submit(runner, p, group)
    except BaseException as e:
        if group is not None and not call_off_local_group(sweep_id, group) and p is not None:
            handle = p.record.handle
            add_note(e, f"the sweep {handle} was submitted; `torchx cancel {handle}` ends it")
        raise


def submit(runner: Runner, p: SweepPlan) -> str:
    """Submit what ``plan`` or ``resume`` built; returns the sweep handle. A resume's plan
    is submitted under the sweep's resume lock, and only if nothing was submitted for the
    sweep since the plan was made."""
    if p.resumed_from is None:
        return _submit(runner, p)
    with resuming(p.record.sweep_id, p.handle):
        # Any change, not only a submission: a cancel since the plan records trials' ends
        # that saving the plan's copy would erase.
        if _as_saved(record_of(p.handle)) != p.resumed_from:
            raise SpecsError(
                "--resume",
                p.handle,
                "the sweep changed since this plan was made (resumed or cancelled); dry-run "
                "the resume again",
            )
        return _submit(runner, p)


def resume_and_submit(runner: Runner, handle: str) -> str:
    """Plan and submit a resume of the sweep, holding its resume lock throughout, so no
    other resume plans from the record this one is about to change."""
    sweep_id = record_of(handle).sweep_id  # no such sweep: said before any lock file is made
    with resuming(sweep_id, handle):
        return _submit(runner, resume(runner, handle, check_limits=False, locked=True))


def _as_saved(record: SweepRecord) -> str:
    """The record as text, to tell whether anything in it changed."""
    return json.dumps(record.to_json(), sort_keys=True)


def _submit(runner: Runner, p: SweepPlan, group: subprocess.Popen[bytes] | None = None) -> str:
    """Submit what ``plan`` built; returns the sweep handle. ``group``: the local group's
    process, started by ``open_local_group`` for this plan.

    One request (an array, an Indexed Job): the record is written once, as soon as the
    request is accepted, with its job; if it cannot be written, the job is cancelled, so
    nothing runs that no record names. A local group: the record is written, naming the
    trials' apps, before the group is told them (``start_local_group``). Otherwise the
    record is written first, since the process that submits the trials reads it."""
    record = p.record
    if record.mode in ("array", "indexed"):
        from torchx.schedulers import SchedulerError

        try:
            handle = runner.schedule(p.request)
        except Exception as e:
            if record.mode == "array" and isinstance(e, SchedulerError):
                from torchx.schedulers.slurm_array import check_array_size, max_array_size

                # Say which limit, when that is why (asked only now: it costs a command).
                check_array_size(p.indices, max_array_size())
            raise
        job = parse_app_handle(handle)[2]
        record.array_jobs.append(job)
        for pos, i in enumerate(p.indices):
            record.trials[i].attempts.append(_member_id(record.mode, job, i, pos))
            record.trials[i].final_state, record.trials[i].final_exit_code = "", None
        try:
            save(record)
        except BaseException:
            runner.cancel(handle)
            raise
        return record.handle
    if p.requests:
        start_local_group(runner, record, p.indices, p.requests, group)
        return record.handle
    assert group is None, "a local group's process, for a sweep planned as no local group"
    save(record)
    start_group(record, p.indices)
    return record.handle


def _member_id(mode: str, job: str, index: int, pos: int) -> str:
    """The app id of trial ``index``, the ``pos``-th of job ``job``: Slurm's array task
    ``A_index``, or the Indexed Job's ``NAMESPACE:JOB-pos``."""
    if mode == "array":
        return f"{job}_{index}"
    from torchx.schedulers.kubernetes_indexed import trial_app_id

    return trial_app_id(job, pos)


# -- by handle --------------------------------------------------------------------------


def sweep_id_of(handle: str) -> str | None:
    """The sweep id of ``handle`` if it names a sweep, else None."""
    try:
        _, _, app_id = parse_app_handle(handle)
    except SpecsError:
        return None
    return app_id if is_sweep_id(app_id) else None


def sweep_handle_of(sweep_id: str) -> str | None:
    """The handle of sweep ``sweep_id`` (``sweep-...``) submitted from this machine, read
    from its record alone (no scheduler is asked); None when there is no such record."""
    if not is_sweep_id(sweep_id):
        return None
    try:
        record = load(sweep_id)
    except Exception:  # any unreadable record: a hint must never fail
        return None
    return record.handle if record is not None else None


def record_of(handle: str) -> SweepRecord:
    sweep_id = sweep_id_of(handle)
    record = load(sweep_id) if sweep_id else None
    if record is None:
        raise SpecsError(
            "sweep handle", handle, "no such sweep here; `torchx run --sweep ...` prints one"
        )
    return record


def status(runner: Runner, handle: str) -> SweepStatus:
    """Every trial's state; while a resume of the sweep runs (it holds the sweep's resume
    lock), the trials it submits again read PENDING and the sweep has not ended."""
    # The lock first, then the record: a record read after the lock was found free is the
    # one from before a resume or the one it saved, never the old one read just before a
    # resume saved and let go (which would read as ended while its trials run again).
    resumed_by = _resumer_of(handle)
    return status_of(runner, handle, record_of(handle), resumed_by)


def _resumer_of(handle: str) -> str | None:
    sweep_id = sweep_id_of(handle)
    return resumer(sweep_id) if sweep_id is not None else None  # record_of then says why


def wait(
    runner: Runner, handle: str, interval: float = 1.0, timeout: float | None = None
) -> SweepStatus:
    """The sweep's status once every trial ended, or once ``timeout`` seconds passed (then
    not terminal)."""
    deadline = None if timeout is None else time.monotonic() + timeout

    def left(pause: float) -> float:
        return pause if deadline is None else min(pause, deadline - time.monotonic())

    while True:
        record = record_of(handle)
        driver = record.driver_pid
        if record.mode == "group" and driver is not None and driver_alive(record):
            # The sweep cannot end while its driver lives (``_overall``): sleep until the
            # driver exits rather than describe every trial each ``interval``.
            pause = left(max(interval, _DRIVER_RECHECK_S))
            if pause > 0:
                await_exit(driver, pause)
                continue
        st = status(runner, handle)
        pause = left(interval)
        if st.is_terminal() or pause <= 0:
            return st
        time.sleep(pause)


def cancel(runner: Runner, handle: str, timeout: float = 60.0) -> None:
    """End every trial: the driver stops submitting and cancels what it started (or
    Slurm cancels the whole array); returns once nothing of the sweep runs. Refused at
    once while a resume of the sweep runs."""
    sweep_id = record_of(handle).sweep_id  # no such sweep: said before any lock file is made
    # Held from the read to the last save: a resume meanwhile would submit jobs that a save
    # from the copy read before would drop from the record (running, and named nowhere).
    with changing(sweep_id, handle, "cancel"):
        _cancel(runner, handle, record_of(handle), timeout)


def _cancel(runner: Runner, handle: str, record: SweepRecord, timeout: float) -> None:
    if record.mode == "array":
        from torchx.schedulers.slurm_array import cancel_arrays

        record.cancelled = True
        save(record)
        cancel_arrays(record.array_jobs)
        return
    if driver_alive(record) and record.driver_pid is not None:
        os.kill(record.driver_pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while driver_alive(record) and time.monotonic() < deadline:
            time.sleep(0.05)
        record = record_of(handle)
    if not record.cancelled:
        record.cancelled = True
        save(record)
    if record.mode == "indexed" or is_kubernetes(runner, record.scheduler):
        # Every trial's objects go, ended trials' too (Kubernetes keeps them otherwise):
        # how the ended ones ended is recorded first, from their pods.
        st = status(runner, handle)
        record = record_of(handle)
        for t in st.trials:
            trial = record.trials[t.index]
            if trial.attempts and is_terminal(t.state) and not trial.final_state:
                trial.final_state, trial.final_exit_code = t.state.name, t.exit_code
        save(record)
        delete_trials(runner, record)
        return
    # what has ended, or will never start (its group is gone), needs no cancel
    for t in status(runner, handle).trials:
        if t.handle is not None and not is_terminal(t.state):
            runner.cancel(t.handle)


def resume(
    runner: Runner, handle: str, check_limits: bool = True, *, locked: bool = False
) -> SweepPlan:
    """A plan that runs again only the trials that did not succeed. ``locked``: the
    caller holds the sweep's resume lock (otherwise a resume running now is refused)."""
    if not locked:
        who = _resumer_of(handle)  # before the record is read: see status()
        if who is not None:
            raise busy(handle, who)
    record = record_of(handle)
    if record.mode == "group" and driver_alive(record):
        raise SpecsError(
            "--resume", handle, "the sweep is still running; wait for it or cancel it first"
        )
    before = _as_saved(record)  # before this plan changes the record
    st = status_of(runner, handle, record, None)
    if not st.is_terminal():
        raise SpecsError(
            "--resume", handle, "some trials are still running; wait for them or cancel first"
        )
    todo = [t.index for t in st.trials if t.state != AppState.SUCCEEDED]
    if not todo:
        raise SpecsError("--resume", handle, "every trial succeeded; there is nothing to re-run")
    record.cancelled = False
    for t in record.trials:
        t.cancelled, t.error = False, ""
    if record.workspace and record.cfg.get("job_dir"):
        # Copied into job_dir when the sweep was submitted: the re-run trials find it there.
        record.built_workspace, record.workspace = record.workspace, None
    p = plan(
        runner,
        sweep_of(record),
        record.scheduler,
        record=record,
        indices=todo,
        check_limits=check_limits,
    )
    p.resumed_from = before
    return p


__all__ = [
    "SweepPlan",
    "SweepStatus",
    "TrialStatus",
    "cancel",
    "plan",
    "record_of",
    "resume",
    "resume_and_submit",
    "status",
    "submit",
    "sweep_handle_of",
    "sweep_id_of",
    "trial_handle",
    "wait",
]
