"""When a local app's supervisor writes its state: the replicas' start is written as any
change is (within ``STATE_WRITE_INTERVAL``, not at once), and the first write that records
the supervisor's pid is followed by a look for the cancel marker."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

from torchx.schedulers._local_requeue import REQUEUE_FILE
from torchx.schedulers._local_state_files import CANCEL_FILE, STATE_FILE
from torchx.schedulers._local_supervisor import Supervisor
from torchx.schedulers.local_scheduler import LocalScheduler
from torchx.specs import AppDef, AppState, Role, macros

# The replica waits until the state on disk says it runs, with the supervisor's pid and
# its own process group, and exits 0 then (3 if that never comes).
_WAIT_FOR_RUNNING = """
import json, os, sys, time
path = os.path.join(sys.argv[1], ".torchx", "state.json")
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    with open(path) as f:
        state = json.load(f)
    mine = [r for r in state.get("replicas", []) if r.get("pid") == os.getpid()]
    if state["state"] == "RUNNING" and state.get("supervisor_pid") and mine:
        sys.exit(0 if mine[0]["pgid"] == os.getpid() else 4)
    time.sleep(0.01)
sys.exit(3)
"""


def test_a_running_apps_state_is_written_with_its_pid_and_groups(
    scheduler: LocalScheduler, tmp_path: Path
) -> None:
    log_dir = tmp_path / "logs"
    app_dir = f"{log_dir / scheduler.session_name}/{macros.app_id}"
    role = Role("r", image="", entrypoint=sys.executable, args=["-c", _WAIT_FOR_RUNNING, app_dir])
    app_id = scheduler.schedule(
        scheduler.submit_dryrun(AppDef("w", [role]), {"log_dir": str(log_dir)})
    )
    desc = scheduler.wait(app_id, timeout=180)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert desc.roles_statuses[0].replicas[0].exit_code == 0


@contextlib.contextmanager
def _supervisor_here(tmp_path: Path, name: str) -> Iterator[tuple[Supervisor, str]]:
    """The supervisor of a one-replica app (submitted, its files written), built in this
    process: nothing is started. Its state is ended CANCELLED on the way out."""
    scheduler = LocalScheduler("test", state_dir=tmp_path / "state")
    role = Role("r", image="", entrypoint="true")
    info = scheduler.submit_dryrun(AppDef(name, [role]), {"log_dir": str(tmp_path / "logs")})
    req = info.request
    meta = scheduler._make_app_dir(req)
    scheduler._write_app_files(req, meta)
    r, w = os.pipe()
    # ``close`` resets the wakeup fd and SIGCHLD, as a supervisor process wants: this
    # process (pytest, maybe an event loop) gets its own back.
    wakeup_fd = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(wakeup_fd)
    on_sigchld = signal.getsignal(signal.SIGCHLD)
    sup = Supervisor(req.app_dir, w, shared=True)
    try:
        yield sup, meta
        sup.state = "CANCELLED"
        sup.record_end()
    finally:
        sup.close()
        signal.set_wakeup_fd(wakeup_fd)
        signal.signal(signal.SIGCHLD, on_sigchld)
        os.close(r)
        os.close(w)
    desc = scheduler.describe(req.app_id)
    assert desc is not None and desc.state == AppState.CANCELLED


def test_the_first_write_with_the_pid_looks_for_the_cancel_marker(tmp_path: Path) -> None:
    # a canceller that wrote the marker before the pid was on disk could not signal it
    with _supervisor_here(tmp_path, "m") as (sup, meta):
        Path(meta, CANCEL_FILE).touch()
        assert not sup.cancel_requested
        sup.write_state()  # the first: due at once (nothing written by this object yet)
        state = json.loads(Path(meta, STATE_FILE).read_text())
        assert state["supervisor_pid"] == os.getpid()
        assert sup.cancel_requested  # seen after the pid was recorded, not before
        # later writes leave the markers to signals and housekeeping
        sup.cancel_requested = False
        sup.dirty, sup.last_write = True, 0.0
        sup.write_state()
        assert not sup.cancel_requested


def test_the_first_write_with_the_pid_takes_a_requeue_asked_before(tmp_path: Path) -> None:
    with _supervisor_here(tmp_path, "q") as (sup, meta):
        Path(meta, REQUEUE_FILE).touch()
        sup.write_state()
        assert sup.requeue_requested and not sup.cancel_requested
        assert not Path(meta, REQUEUE_FILE).exists()  # taken: the request counts once


def test_a_requeue_asked_before_the_start_is_taken_before_any_replica_starts(
    tmp_path: Path,
) -> None:
    # asked while the app was PENDING: the replicas start once, not started, warned and
    # started again; the request still counts as the one preemption it stands for
    with _supervisor_here(tmp_path, "p") as (sup, meta):
        Path(meta, REQUEUE_FILE).touch()
        sup.take_markers_before_start()
        assert not Path(meta, REQUEUE_FILE).exists()  # taken, once
        assert (sup.num_preemptions, sup.requeue_requested, sup.cancel_requested) == (
            1,
            False,
            False,
        )
        assert [r.attempt for r in sup.replicas] == [0]  # nothing started yet
        sup.write_state(force=True)
        assert not sup.requeue_requested  # the first write finds nothing more to take
        assert json.loads(Path(meta, STATE_FILE).read_text())["num_preemptions"] == 1


def test_a_cancel_asked_before_the_start_wins_over_a_requeue(tmp_path: Path) -> None:
    with _supervisor_here(tmp_path, "c") as (sup, meta):
        Path(meta, REQUEUE_FILE).touch()
        Path(meta, CANCEL_FILE).touch()
        sup.take_markers_before_start()
        assert sup.cancel_requested and sup.num_preemptions == 0
