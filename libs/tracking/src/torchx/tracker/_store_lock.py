"""One lock per MLflow store, held while a tracker finds-or-creates an experiment or run.

MLflow has no "create if absent": ``create_experiment`` and ``create_run`` are a search
and a create, so replicas of one app starting together each create their own experiment
or run of one name. Its file store also writes ``meta.yaml`` by truncating it in place
and makes a tag's folder with check-then-mkdir, so a concurrent reader skips a run that
is being written and a concurrent writer of ``a/x`` and ``a/y`` fails. An OS file lock
(``fcntl.flock``, released by the kernel if the holder dies) serializes those steps:

- file store: the lock file lives beside the store's folder (``.mlruns.torchx-lock`` for
  ``mlruns``; inside it, MLflow would take the folder for an initialized store), so
  replicas on every host that shares the folder take the same lock;
- SQLite: beside the database file;
- a tracking server: in this host's temporary folder, keyed by the URI, which covers the
  replicas of one host. Across hosts nothing is shared; there the tracker never deletes
  a run and reads merge the runs of one name, so no record is lost.

A tracker waits for the lock at most :data:`STORE_LOCK_WAIT_S`, far longer than finding or
creating a run takes, so only a holder that is stopped (Ctrl-Z, SIGSTOP) or hung makes it
give up: a ``TimeoutError`` in one line naming the lock file, the holder's pid (where the
kernel's ``/proc/locks`` lists one that still holds the lock) and how to let it go.

The lock files stay: there is one per store, not per run or app, and its content records
that the store was set up (see :func:`store_setup_lock`). Removing a lock file that other
processes may have open would let two of them lock two different files of one name.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Iterator
from urllib.parse import unquote, urlparse

LOCK_SUFFIX = ".torchx-lock"
#: How long a tracker waits for another to let go of its store's lock, in seconds.
STORE_LOCK_WAIT_S = 300.0


def _local_path(uri: str) -> str | None:
    """The folder of a ``file:`` store or the database of a ``sqlite:`` one; else None."""
    if uri.startswith("sqlite:"):
        path = uri.partition(":///")[2]
        return "/" + path.lstrip("/") if path and path != ":memory:" else None
    if uri.startswith("file:"):
        return unquote(urlparse(uri).path) or None
    if "://" not in uri:
        return os.path.abspath(uri)
    return None


def lock_path(uri: str) -> str:
    """Where the lock of store ``uri`` lives (see the module's docstring)."""
    local = _local_path(uri)
    if local is not None:
        folder, name = os.path.split(os.path.normpath(local))
        return os.path.join(folder, f".{name}{LOCK_SUFFIX}")
    digest = hashlib.sha256(uri.encode()).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), "torchx", "mlflow-locks", f"{digest}.lock")


def _set_up(uri: str) -> bool:
    """Whether a tracker here already opened store ``uri`` once (and it still exists)."""
    local = _local_path(uri)
    try:
        return os.path.getsize(lock_path(uri)) > 0 and (local is None or os.path.exists(local))
    except OSError:
        return False


@contextlib.contextmanager
def store_setup_lock(uri: str) -> Iterator[None]:
    """Hold store ``uri``'s lock while opening it, until one opening has succeeded.

    Opening a new store sets it up (a SQLite database's tables: seconds), and two
    replicas doing that at once fail; once one has, the lock file says so and later
    openings run side by side."""
    if _set_up(uri):
        yield
        return
    with store_lock(uri):
        yield
        with open(lock_path(uri), "w") as f:
            f.write("set up\n")


@contextlib.contextmanager
def store_lock(uri: str) -> Iterator[None]:
    """Hold store ``uri``'s lock, waiting up to STORE_LOCK_WAIT_S for its holder to let go
    (then a TimeoutError naming the lock file and the holder)."""
    import fcntl

    path = lock_path(uri)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        deadline = time.monotonic() + STORE_LOCK_WAIT_S
        pause = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(_still_held(path, fd)) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _still_held(path: str, fd: int) -> str:
    import shlex

    holder = _lock_holder(fd)
    if holder:
        who, find, cont = f"pid {holder}", "", f"kill -CONT {holder}"
    else:  # its pid is not known here (see _lock_holder): say how to find it
        quoted = shlex.quote(path)
        who, cont = "another process", "kill -CONT with its pid"
        find = (
            f"; find it with fuser -v {quoted} or lsof {quoted} (they list every process"
            " that has the file open, this one included)"
        )
    return (
        f"the MLflow store lock {path} is still held after {STORE_LOCK_WAIT_S:g}s by {who}"
        f" (another tracker of this store){find}; if it is stopped (Ctrl-Z), continue it (fg,"
        f" or {cont}), else end it, then start this tracker again (nothing was written)"
    )


def _lock_holder(fd: int) -> int | None:
    """The pid /proc/locks (Linux) names for a lock on ``fd``'s file, if it names one that
    still holds it. Its lines read ``1: FLOCK ADVISORY WRITE <pid> <major:minor:inode> 0
    EOF``, with the pid that took the lock: one that may have ended (a child it forked
    holding the lock on), its number since reused, or 0 (another pid namespace). So a pid
    is named only where its own descriptors show it holding a lock on the file."""
    st = os.fstat(fd)
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    with contextlib.suppress(OSError), open("/proc/locks") as table:
        for line in table:
            fields = line.split()  # a waiter's line has "->" second, so never matches
            pid = int(fields[4]) if fields[5:6] == [wanted] and fields[4].isdigit() else 0
            if pid > 0 and _shows_lock(pid, wanted):
                return pid
    return None


def _shows_lock(pid: int, wanted: str) -> bool:
    """Whether a ``lock:`` line of live process ``pid``'s /proc/PID/fdinfo names the file
    ``wanted`` (``major:minor:inode``); False for an ended process, or one not ours."""
    try:
        names = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return False
    for name in names:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/fdinfo/{name}") as info:
            for line in info:  # "lock:\t1: FLOCK  ADVISORY  WRITE <pid> <maj:min:inode> ..."
                if line.startswith("lock:") and wanted in line.split():
                    return True
    return False
