"""A tracker waits for its store's lock while another process holds it, and at most
STORE_LOCK_WAIT_S: a holder that is stopped (Ctrl-Z) is named in one line instead of
blocking every replica for ever. The holder is a real child process."""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torchx_test_fixtures_processes as processes
from torchx_test_fixtures_processes import ready_child

from torchx.tracker import _store_lock
from torchx.tracker._store_lock import lock_path, store_lock, store_setup_lock

HOLDER = """
import os, signal, sys
from torchx.tracker._store_lock import store_lock
with store_lock(sys.argv[1]):
    print("held", flush=True)
    if sys.argv[2] == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    sys.stdin.read()  # until the test closes it
"""


def _holder(uri: str, how: str) -> contextlib.AbstractContextManager[subprocess.Popen[str]]:
    """A child that holds the store's lock (``how`` "stop": and is stopped, as by Ctrl-Z)."""
    return ready_child([sys.executable, "-c", HOLDER, uri, how], "held", stopped=how == "stop")


def _take_in_a_thread(uri: str) -> tuple[threading.Thread, list[BaseException | None]]:
    """The lock taken (and let go) in a thread, so that a wait for ever fails the test
    instead of hanging it; the list gets None once it was held, or the error."""
    outcome: list[BaseException | None] = []

    def take() -> None:
        try:
            with store_lock(uri):
                outcome.append(None)
        except Exception as e:
            outcome.append(e)

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    return thread, outcome


def test_a_stopped_holder_is_named_once_the_wait_is_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = f"sqlite:///{tmp_path}/m.db"
    with store_setup_lock(uri):  # the store is set up: its lock file says so
        pass
    marker = Path(lock_path(uri)).read_text()
    monkeypatch.setattr(_store_lock, "STORE_LOCK_WAIT_S", 0.5)
    with _holder(uri, "stop") as holder:
        thread, outcome = _take_in_a_thread(uri)
        thread.join(120)
        assert not thread.is_alive(), "the tracker still waits for a stopped holder"
        [error] = outcome
        assert isinstance(error, TimeoutError), "the lock was taken while another held it"
        message = str(error)
        assert "\n" not in message
        assert f"the MLflow store lock {lock_path(uri)} is still held after 0.5s" in message
        assert f"by pid {holder.pid}" in message and f"kill -CONT {holder.pid}" in message
        assert message.endswith("(nothing was written)")
    assert Path(lock_path(uri)).read_text() == marker == "set up\n"  # kept as it was
    with store_lock(uri):  # the holder is gone: taken at once
        pass


def test_a_holder_that_lets_go_is_waited_for(tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/mlruns"
    with _holder(uri, "hold") as holder:
        thread, outcome = _take_in_a_thread(uri)
        assert outcome == []  # the child holds it
        assert holder.stdin is not None
        holder.stdin.close()  # the child lets go
        thread.join(120)
        assert outcome == [None]


def _timeout_message(uri: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(_store_lock, "STORE_LOCK_WAIT_S", 0.5)
    thread, outcome = _take_in_a_thread(uri)
    thread.join(120)
    assert not thread.is_alive(), "the tracker still waits for the holder"
    [error] = outcome
    assert isinstance(error, TimeoutError), "the lock was taken while another held it"
    return str(error)


def _names_how_to_find_it(message: str, uri: str) -> bool:
    """A message that names no holder says how to find it, with the real lock file, and has
    no placeholder for a pid to fill in."""
    path = shlex.quote(lock_path(uri))
    return (
        f"find it with fuser -v {path} or lsof {path}" in message
        and "PID" not in message
        and "kill -CONT with its pid" in message
    )


def test_a_holder_whose_taker_ended_is_not_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/proc/locks lists the pid that took the lock, though it ended and a child it forked
    holds the lock: that pid (free for reuse) is never the one the user is told to end."""
    uri = f"file://{tmp_path}/mlruns"
    with processes.lock_left_to_a_fork(lock_path(uri), "exclusive") as (taker, holder):
        assert (
            processes.pids_in_proc_locks(lock_path(uri)) == [taker]
            and not processes.alive(taker)
            and processes.alive(holder)
        )
        message = _timeout_message(uri, monkeypatch)
    assert "\n" not in message and "still held after 0.5s by another process" in message
    assert f"pid {taker}" not in message and _names_how_to_find_it(message, uri)


def test_a_listed_live_pid_that_holds_no_lock_on_the_file_is_not_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = f"file://{tmp_path}/mlruns"
    with _holder(uri, "hold"), processes.idle_child() as other:
        processes.proc_locks_naming(monkeypatch, _store_lock, other.pid, lock_path(uri))
        message = _timeout_message(uri, monkeypatch)
    assert "\n" not in message and "still held after 0.5s by another process" in message
    assert f"pid {other.pid}" not in message and _names_how_to_find_it(message, uri)
