"""The sweep's lock files: a resume waits for a stopped reader only so long, then names it
in one line; the files are removed when let go, and removing them never lets two
processes hold the writer lock at once. Real child processes hold and contend for them."""

from __future__ import annotations

import fcntl
import os
import shlex
import sys
import threading

import pytest
import torchx_test_fixtures_sweep_lock
from torchx_test_fixtures_processes import (
    alive,
    idle_child,
    lock_left_to_a_fork,
    pids_in_proc_locks,
    proc_locks_naming,
    ready_child,
)
from torchx_test_fixtures_sweep_lock import (
    NOT_LOCKED,
    contending_writers,
    holding_resume_lock,
    stopped_reader,
)
from torchx_test_fixtures_waiting import wait_until

from torchx.runner import _sweep_lock
from torchx.runner._sweep_lock import changing, lock_path, resumer, resuming
from torchx.specs import SpecsError

SWEEP_ID = "sweep-lockfile"
SWEEP = f"local_cwd://torchx/{SWEEP_ID}"


def _lock_files() -> list[str]:
    folder = lock_path(SWEEP_ID).parent
    return sorted(p.name for p in folder.glob(f"{SWEEP_ID}.*")) if folder.exists() else []


def test_a_stopped_reader_makes_a_resume_give_up_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lock_path(SWEEP_ID).parent.mkdir(parents=True)
    lock_path(SWEEP_ID).touch()  # as a resume before left it: readers open it
    monkeypatch.setattr(_sweep_lock, "RESUME_LOCK_WAIT_S", 0.5)
    outcome: list[BaseException | None] = []

    def resume() -> None:
        try:
            with resuming(SWEEP_ID, SWEEP):
                outcome.append(None)
        except SpecsError as e:
            outcome.append(e)

    with stopped_reader(SWEEP_ID) as reader:
        # a thread, so that a resume that waited for ever fails the test instead of hanging it
        resumer_thread = threading.Thread(target=resume, daemon=True)
        resumer_thread.start()
        resumer_thread.join(120)
        assert not resumer_thread.is_alive(), "the resume still waits for a stopped reader"
        [error] = outcome
        assert isinstance(error, SpecsError), "the resume went on while a reader held the lock"
        message = str(error)
        assert "\n" not in message and message.startswith(f"--resume: got {SWEEP!r}; ")
        assert f"{lock_path(SWEEP_ID)} is still locked after 0.5s" in message
        assert f"pid {reader.pid}, which is stopped" in message
        assert f"kill -CONT {reader.pid}" in message and "nothing was submitted" in message
        # it let go of the writer lock: a cancel (or another resume) can go on
        with changing(SWEEP_ID, SWEEP, "cancel"):
            pass
    with resuming(SWEEP_ID, SWEEP):  # the reader is gone: the resume takes the lock
        assert resumer(SWEEP_ID) == f"pid {os.getpid()}"


def test_a_resume_and_a_cancel_remove_their_lock_files() -> None:
    with resuming(SWEEP_ID, SWEEP):
        assert _lock_files() == [f"{SWEEP_ID}.lock", f"{SWEEP_ID}.writer"]
    assert _lock_files() == []
    with changing(SWEEP_ID, SWEEP, "cancel"):
        assert _lock_files() == [f"{SWEEP_ID}.writer"]
    assert _lock_files() == []
    assert resumer(SWEEP_ID) is None  # no file: not being resumed


def test_a_resume_in_another_process_removes_its_files_when_it_ends() -> None:
    with holding_resume_lock(SWEEP) as holder:
        assert resumer(SWEEP_ID) == f"pid {holder.pid}"
        assert holder.stdin is not None
        holder.stdin.close()  # lets it end its resume
        assert holder.wait(120) == 0
    wait_until("the lock files to go", lambda: _lock_files() == [])
    assert resumer(SWEEP_ID) is None


def test_writers_that_remove_the_file_never_hold_the_lock_together() -> None:
    """Each child takes the writer lock over and over (removing the file each time it lets
    go) and makes a marker file exclusively while it holds it: a second holder fails."""
    lock_path(SWEEP_ID).parent.mkdir(parents=True)
    assert contending_writers(SWEEP_ID, n=4, rounds=300) == [0, 0, 0, 0]
    assert _lock_files() == []


def test_a_reader_that_cannot_take_the_lock_fails_at_once_saying_so() -> None:
    """Without a lock file (or with a resume holding it) the stopped reader never reaches
    its stop: it says so and exits, and the test fails in a line, never waits for ever."""
    with pytest.raises(AssertionError) as caught, stopped_reader(SWEEP_ID):
        pass
    message = str(caught.value)
    assert f"'stop', '{SWEEP_ID}'] printed 'not locked (no lock file)\\n'" in message
    assert message.endswith(f"(exit code {NOT_LOCKED})")
    with holding_resume_lock(SWEEP) as holder:
        refused = pytest.raises(AssertionError, match=rf"not locked \(pid {holder.pid}\)")
        with refused, stopped_reader(SWEEP_ID):
            pass


def test_a_helper_child_that_never_says_it_is_ready_is_killed_and_named() -> None:
    argv = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    with pytest.raises(AssertionError) as caught, ready_child(argv, "ready", deadline=0.5):
        pass
    assert f"helper child {argv} did not print 'ready' within 0.5s (exit code -9)" in str(
        caught.value
    )


def test_contending_writers_that_never_finish_are_killed_and_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lock_path(SWEEP_ID).parent.mkdir(parents=True)
    monkeypatch.setattr(torchx_test_fixtures_sweep_lock, "CONTEND_DEADLINE_S", 0.5)
    with pytest.raises(AssertionError, match=r"'contend', 'sweep-lockfile', '1000000000'\] still"):
        contending_writers(SWEEP_ID, n=2, rounds=10**9)


GENERIC_LINE = (
    "by a reader of this sweep (torchx status or wait), reading the sweep; find it with "
    "fuser -v {path} or lsof {path} (they list every process that has the file open, this "
    "one included) and end it"
)


def _generic() -> str:
    """The line that names no reader: how to find it, with the real lock file."""
    return GENERIC_LINE.format(path=shlex.quote(str(lock_path(SWEEP_ID))))


def _resume_gives_up(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(_sweep_lock, "RESUME_LOCK_WAIT_S", 0.5)
    with pytest.raises(SpecsError) as caught, resuming(SWEEP_ID, SWEEP):
        pass
    return str(caught.value)


def test_a_reader_that_ended_leaving_its_lock_to_a_child_is_not_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kernel lists the pid that took a lock, though it ended and a child it forked
    holds the lock: that pid (free for reuse) is never the one the user is told to end."""
    lock = str(lock_path(SWEEP_ID))
    lock_path(SWEEP_ID).parent.mkdir(parents=True)
    with lock_left_to_a_fork(lock, "shared") as (taker, holder):
        assert pids_in_proc_locks(lock) == [taker] and not alive(taker) and alive(holder)
        message = _resume_gives_up(monkeypatch)
    assert "\n" not in message and _generic() in message
    assert f"pid {taker}" not in message and "kill" not in message


@pytest.mark.parametrize("listed", ["0", "a live process that holds nothing"])
def test_a_listed_pid_that_holds_no_lock_on_the_file_is_not_named(
    listed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/proc/locks lists 0 for a taker in another pid namespace (a container sharing the
    state folder); ``kill 0`` would signal the user's own process group."""
    lock_path(SWEEP_ID).parent.mkdir(parents=True)
    reader = os.open(lock_path(SWEEP_ID), os.O_RDONLY | os.O_CREAT)
    try:
        fcntl.flock(reader, fcntl.LOCK_SH)
        with idle_child() as other:
            pid = 0 if listed == "0" else other.pid
            proc_locks_naming(monkeypatch, _sweep_lock, pid, str(lock_path(SWEEP_ID)))
            message = _resume_gives_up(monkeypatch)
    finally:
        os.close(reader)
    assert "\n" not in message and _generic() in message
    assert f"pid {pid}" not in message and "kill" not in message
