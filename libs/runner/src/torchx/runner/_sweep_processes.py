"""The local processes that run a group sweep's trials: starting them, and telling
whether one still runs.

A local group (local_cwd, local_dir) is ONE supervised process of the local scheduler that
runs every trial; any other scheduler's group is a small detached driver
(``_sweep_group``) that submits the trials through the runner. Either is recorded in the
sweep's record as its driver; this process also keeps the ones it started, to read their
exit from the child itself.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchx.runner._sweep_record import (
    SweepRecord,
    ready_sweeps_dir,
    record_path,
    save,
    sweeps_dir,
)

if TYPE_CHECKING:
    from torchx.runner._runner import Runner
    from torchx.schedulers.local_scheduler import LocalScheduler
    from torchx.specs import AppDryRunInfo

# How often the group's driver looks at its running trials, by scheduler.
_LOCAL_POLL_S = 0.05
_REMOTE_POLL_S = 2.0
_LOCAL = ("local_cwd", "local_dir")

# Drivers this process started: their exit is read from the child itself (a driver that
# ended is a zombie until reaped, with an empty command line).
_drivers: dict[int, subprocess.Popen[bytes]] = {}


def local_group(runner: Runner, scheduler: str) -> LocalScheduler | None:
    """``scheduler`` when it runs a sweep's trials as one supervised group of its own.

    Not a LocalScheduler subclass that overrides 0.7's ``schedule`` hook: the group would
    start every trial without it, so such a sweep is submitted one app per trial through
    the runner (``schedule`` included), by the driver other schedulers' sweeps use."""
    from torchx.schedulers.local_scheduler import LocalScheduler

    sched = runner._scheduler(scheduler)
    if isinstance(sched, LocalScheduler) and type(sched).schedule is LocalScheduler.schedule:
        return sched
    return None


def _group_log(sweep_id: str) -> Path:
    return sweeps_dir() / f"{sweep_id}.log"


def open_local_group(
    runner: Runner, scheduler: str, sweep_id: str, parallel: int
) -> subprocess.Popen[bytes] | None:
    """The process of new sweep ``sweep_id``'s local group, started before its trials are
    planned: its interpreter starts while they are (on another core), not after. It is
    told nothing until every trial's files are written (``start_local_group``); should
    anything fail first, ``call_off_local_group`` ends it with nothing left behind.

    None where ``scheduler`` runs no local group, or where the group cannot be started
    now: planning then meets and says what is wrong (an unknown scheduler, a sweeps
    folder that is a file), in its own order, and a group is started after it."""
    try:
        sched = local_group(runner, scheduler)
        if sched is None:
            return None
        # checked as a save checks it, before the group's log is made in it
        ready_sweeps_dir()
        log = _group_log(sweep_id)
        return sched.start_group(parallel, sweep_id, str(log), new_log=True)
    except Exception:
        return None


def call_off_local_group(sweep_id: str, group: subprocess.Popen[bytes]) -> bool:
    """End a group from ``open_local_group`` whose sweep was not submitted, and remove its
    log (made by ``open_local_group``, empty: the group was told no trial). A group told
    its trials is left alone, log and all (False): the sweep was submitted, they run."""
    from torchx.schedulers.local_scheduler import LocalScheduler

    if not LocalScheduler.call_off_group(group):
        return False
    _group_log(sweep_id).unlink(missing_ok=True)
    return True


def start_local_group(
    runner: Runner,
    record: SweepRecord,
    indices: list[int],
    requests: Mapping[int, AppDryRunInfo[Any]],
    group: subprocess.Popen[bytes] | None = None,
) -> None:
    """Submit trials ``indices`` (their ``requests``) as one supervised local group; by
    ``group`` when ``open_local_group`` started it.

    The record names the trials' apps and the group before the group is told them: once
    they run, whatever fails after (an interrupt) leaves a sweep recorded as submitted.
    Should anything fail before (the record cannot be saved, the group has ended), the
    group is called off and nothing of this submission is kept: no app, and the record
    as it was (none, and no log, for a new sweep)."""
    from torchx.schedulers.local_scheduler import LocalScheduler

    sched = runner._scheduler(record.scheduler)
    assert isinstance(sched, LocalScheduler)
    infos = [requests[i] for i in indices]
    new = not record_path(record.sweep_id).exists()  # not a resume
    # what naming the apps changes, to put back should the group not run them
    before = [(len(t.attempts), t.final_state, t.final_exit_code) for t in record.trials]
    driver = (record.driver_pid, record.driver_done)
    named: list[subprocess.Popen[bytes]] = []

    def name_them(proc: subprocess.Popen[bytes]) -> None:
        named.append(proc)
        for i, info in zip(indices, infos, strict=True):
            trial = record.trials[i]
            trial.attempts.append(info.request.app_id)
            trial.final_state, trial.final_exit_code = "", None
        record.driver_pid, record.driver_done = proc.pid, False
        save(record)

    log = str(_group_log(record.sweep_id))
    try:
        proc = sched.schedule_group(infos, record.parallel, record.sweep_id, log, group, name_them)
    except BaseException:
        if named and not LocalScheduler.call_off_group(named[0]):
            raise  # told its trials: they run, and the record names them
        for trial, (n, state, code) in zip(record.trials, before, strict=True):
            del trial.attempts[n:]
            trial.final_state, trial.final_exit_code = state, code
        record.driver_pid, record.driver_done = driver
        if new:  # nothing of the sweep was submitted
            record_path(record.sweep_id).unlink(missing_ok=True)
            _group_log(record.sweep_id).unlink(missing_ok=True)
        elif named:
            save(record)  # as it was before this submission
        raise
    _drivers[proc.pid] = proc


def start_group(record: SweepRecord, indices: list[int]) -> None:
    with open(_group_log(record.sweep_id), "ab") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "torchx.runner._sweep_group",
                record.sweep_id,
                ",".join(map(str, indices)),
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    # The driver records itself too; this makes a status asked at once see it running.
    _drivers[proc.pid] = proc
    record.driver_pid = proc.pid
    record.driver_done = False
    save(record)


def driver_alive(record: SweepRecord) -> bool:
    pid = record.driver_pid
    if pid is None or record.driver_done:
        return False
    if pid in _drivers:
        return _drivers[pid].poll() is None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return record.sweep_id.encode() in f.read()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


def await_exit(pid: int, timeout: float) -> None:
    """Sleep until process ``pid`` exits, or ``timeout`` seconds."""
    from torchx.schedulers.local_scheduler import wait_for_exit

    own = _drivers.get(pid)
    if wait_for_exit(pid, timeout):
        if own is not None:
            own.poll()
    elif own is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            own.wait(timeout)
    else:
        time.sleep(min(timeout, 0.05))
