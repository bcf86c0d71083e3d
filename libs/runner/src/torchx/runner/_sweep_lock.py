"""Who is changing a sweep's record: two advisory locks beside the record.

- ``<sweep id>.writer``: held exclusively by whoever reads, changes and saves the record
  outside the sweep's own submission: a resume (from its plan until the record names its
  new submissions) or a cancel (across its read-modify-save). A second one is refused at
  once, in one line naming the holder, so no save is made from a stale copy.
- ``<sweep id>.lock``: held exclusively by a resume alone, inside the writer lock; it is
  what ``status``/``wait`` test (a shared try, never a wait), so they can tell a sweep being
  resumed (not ended) from one that ended.

Why two: ``flock`` has no "is it held?" question; a reader asks by trying a shared lock for
an instant. A writer that tried the same file without waiting would be refused whenever a
reader's instant met its try, though no other writer runs. So writers exclude each other
on a file readers never touch, and the resume then *waits* for the reader lock: what it
waits for is only readers' instants (open, try, close; nothing blocks in between), never
another writer. It waits up to :data:`RESUME_LOCK_WAIT_S`: far longer than a reader
descheduled on a loaded machine holds its instant, so only a reader that is stopped
(Ctrl-Z, SIGSTOP) or hung makes it give up, in one line naming the lock file, the reader's
pid (where ``/proc/locks`` lists one that still holds the lock) and how to let it go.

The locks are the kernel's (``flock``): they go with the process that holds them, however
it ends, so a crashed resume or cancel leaves nothing behind and its sweep reads as it was
before. Nothing is written into the record for them (older readers keep reading records).
The holder writes its pid into the files for the user's information only; nothing decides
by it.

The holder removes a file when it lets go, so no lock files pile up beside the records.
That is safe because every locker, once its lock is granted, checks that the path still
names the file it locked (else it locked a removed file and starts again), and a file is
removed only by the holder of its exclusive lock: while anyone holds a lock on the file the
path names, the path keeps naming it, so no two processes can hold conflicting locks on two
files of one name. A holder killed before it removes its file leaves it for the next one.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from torchx.runner._sweep_record import record_path
from torchx.specs import SpecsError

Change = Literal["resume", "cancel"]

#: How long a resume waits for readers (``status``, ``wait``) to let go of its lock.
RESUME_LOCK_WAIT_S = 60.0


def lock_path(sweep_id: str) -> Path:
    """The lock a resume holds and ``status`` tests."""
    return record_path(sweep_id).with_suffix(".lock")


def writer_path(sweep_id: str) -> Path:
    """The lock whoever changes the record (a resume, a cancel) holds; readers never touch
    it."""
    return record_path(sweep_id).with_suffix(".writer")


def resumer(sweep_id: str) -> str | None:
    """Who is resuming the sweep (``pid N``, or ``another process`` when it has not said
    yet); None when no resume of it runs now. Asks the kernel only: never waits."""
    import fcntl  # Linux and macOS: the sweeps' local state lives there

    path = lock_path(sweep_id)
    while True:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:  # not being resumed (no file), or unreadable: nothing says it is
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return _holder(fd)[0]
            except OSError:  # no file locks here (ENOLCK): no resume can hold one either
                return None
            if _names(path, fd) or not path.exists():
                return None
            # a resume removed the file this opened and another made a new one: ask that
        finally:
            os.close(fd)  # releases the shared lock, if taken


def busy(handle: str, who: str) -> SpecsError:
    return SpecsError(
        "--resume",
        handle,
        f"another resume of this sweep is running ({who}); let it finish "
        f"(torchx wait {handle}), then resume again what still failed",
    )


def _refusal(mine: Change, handle: str, who: str, theirs: str) -> SpecsError:
    """One line: ``mine`` cannot start while ``theirs`` (``resume``, ``cancel``, or ""
    when the holder has not said yet: it is then a resume in all likelihood) runs."""
    if mine == "resume":
        if theirs == "cancel":
            return SpecsError(
                "--resume",
                handle,
                f"a cancel of this sweep is running ({who}); resume it once the cancel "
                f"has ended (torchx status {handle} says so)",
            )
        return busy(handle, who)
    if theirs == "cancel":
        return SpecsError(
            "sweep handle",
            handle,
            f"another cancel of it is running ({who}); it ends every trial "
            f"(torchx wait {handle} says when)",
        )
    # its record is about to name new submissions: a cancel saved now would lose them
    return SpecsError(
        "sweep handle",
        handle,
        f"a resume of it is running ({who}); cancel again once it has submitted its "
        f"trials (torchx status {handle} says so)",
    )


def _open(path: Path, mine: Change, handle: str) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The lock holds nothing secret; it sits beside the record in the sweeps folder,
        # which save() keeps private to its owner (0700).
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as e:
        raise SpecsError(
            _field(mine),
            handle,
            f"cannot open {path} ({e.strerror}); {mine} it as the user who submitted it, "
            "with its state directory writable",
        ) from None


def _field(mine: Change) -> str:
    return "--resume" if mine == "resume" else "sweep handle"


def _lock(fd: int, how: int, path: Path, mine: Change, handle: str) -> bool:
    """``flock``; True once held, BlockingIOError when another holds it (``how``
    non-blocking). On a filesystem without file locks (ENOLCK: an NFS mount without a lock
    service) a cancel goes on unlocked (False): no resume can run there to race it, as a
    resume is refused there."""
    import fcntl

    try:
        fcntl.flock(fd, how)
        return True
    except BlockingIOError:
        raise
    except OSError as e:
        if mine == "cancel":
            return False
        raise SpecsError(
            _field(mine),
            handle,
            f"cannot lock {path} ({e.strerror}); keep torchx's state on a filesystem with "
            "file locks (a local disk), e.g. XDG_STATE_HOME=/var/tmp/$USER",
        ) from None


def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (not removed, nor replaced)."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    was = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (was.st_dev, was.st_ino)


@contextlib.contextmanager
def _held(
    path: Path, mine: Change, handle: str, refusal: Callable[[int], SpecsError] | None
) -> Iterator[int | None]:
    """Hold the exclusive lock of the file ``path`` names for the block, then remove the
    file and let go (see the module's docstring). Yields the locked file's descriptor, or
    None on a filesystem without file locks (a cancel goes on unlocked there). When another
    holds the lock: ``refusal(fd)`` at once, or with ``refusal`` None, a wait of up to
    RESUME_LOCK_WAIT_S and then an error naming the holder."""
    import fcntl

    deadline = time.monotonic() + RESUME_LOCK_WAIT_S
    pause = 0.001
    while True:
        fd = _open(path, mine, handle)
        try:
            try:
                held = _lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, path, mine, handle)
            except BlockingIOError:
                if refusal is not None:
                    raise refusal(fd) from None
                if time.monotonic() > deadline:
                    raise _stuck(path, fd, handle) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
                continue
            if held and not _names(path, fd):
                continue  # locked a file its holder removed: lock the one the path names
            try:
                yield fd if held else None
            finally:
                if held:
                    with contextlib.suppress(OSError):
                        os.unlink(path)  # still ours: no one else can hold a lock on it
            return
        finally:
            os.close(fd)  # releases the lock, if held


def _stuck(path: Path, fd: int, handle: str) -> SpecsError:
    """A resume that waited RESUME_LOCK_WAIT_S for a reader of ``path`` to let go."""
    readers = _pids_locking(fd)
    if not readers:
        quoted = shlex.quote(str(path))
        who = "a reader of this sweep (torchx status or wait)"
        fix = (
            f"find it with fuser -v {quoted} or lsof {quoted} (they list every process that"
            " has the file open, this one included) and end it"
        )
    else:
        pid = readers[0]
        who = f"pid {pid}" + (", which is stopped" if _stopped(pid) else "")
        fix = f"continue it (fg, or kill -CONT {pid}) or end it (kill {pid})"
    return SpecsError(
        "--resume",
        handle,
        f"{path} is still locked after {RESUME_LOCK_WAIT_S:g}s by {who}, reading the sweep;"
        f" {fix}, then resume again (nothing was submitted)",
    )


def _pids_locking(fd: int) -> list[int]:
    """The pids that hold a lock on ``fd``'s file: those /proc/locks (Linux) lists for it
    that are alive and hold such a lock themselves; none where Linux does not say.

    /proc/locks gives the pid that *took* a lock: it may have ended, its number then
    reused, while a child it forked holds the lock; and it is 0 where the taker runs in
    another pid namespace. Such a pid is never named (the user would be told to end it)."""
    st = os.fstat(fd)
    file_id = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids = []
    try:
        with open("/proc/locks") as table:
            for line in table:  # "1: FLOCK ADVISORY READ <pid> <maj:min:inode> 0 EOF"
                fields = line.split()
                if len(fields) > 5 and fields[5] == file_id and fields[4].isdigit():
                    pids.append(int(fields[4]))  # waiters ("1: -> FLOCK ...") never match
    except OSError:
        pass
    return [pid for pid in pids if pid > 0 and _holds_lock_on(pid, file_id)]


def _holds_lock_on(pid: int, file_id: str) -> bool:
    """Whether live process ``pid`` holds a lock on the file ``file_id`` (``maj:min:inode``)
    names: one of its descriptors' /proc/PID/fdinfo shows a ``lock:`` line for it. False
    for an ended process, or one this user may not inspect."""
    folder = f"/proc/{pid}/fdinfo"
    try:
        descriptors = os.listdir(folder)
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            with open(f"{folder}/{descriptor}") as info:
                # "lock:\t1: FLOCK  ADVISORY  READ 1234 08:01:5678 0 EOF"
                if any(line.startswith("lock:") and file_id in line.split() for line in info):
                    return True
        except OSError:
            continue  # closed since it was listed
    return False


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (state T or t in /proc/PID/stat, Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read(4096).rpartition(b")")[2].split()[:1]
    except OSError:
        return False
    return state in ([b"T"], [b"t"])


@contextlib.contextmanager
def _says(fd: int | None, text: str) -> Iterator[None]:
    """``text`` in the held lock file for the block; emptied after, so a reader then sees
    no pid rather than one that no longer holds it. Nothing where no lock is held (None)."""
    if fd is None:
        yield
        return
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{text}\n".encode(), 0)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)


@contextlib.contextmanager
def changing(sweep_id: str, handle: str, mine: Change) -> Iterator[None]:
    """Hold the sweep's writer lock for the block; a :class:`SpecsError` naming the other
    resume or cancel at once if one holds it."""

    def refusal(fd: int) -> SpecsError:
        return _refusal(mine, handle, *_holder(fd))

    with (
        _held(writer_path(sweep_id), mine, handle, refusal) as fd,
        _says(fd, f"{os.getpid()} {mine}"),
    ):
        yield


@contextlib.contextmanager
def resuming(sweep_id: str, handle: str) -> Iterator[None]:
    """Hold the sweep's writer lock and resume lock for the block (``status`` then reads the
    sweep as being resumed); a :class:`SpecsError` naming the other resume or cancel at
    once if one holds the writer lock, or naming a reader that holds the resume lock for
    longer than RESUME_LOCK_WAIT_S."""
    # Waits for the resume lock: with the writer lock held, only readers' instants (see
    # the module's docstring) can stand in the way.
    with (
        changing(sweep_id, handle, "resume"),
        _held(lock_path(sweep_id), "resume", handle, None) as fd,
        _says(fd, str(os.getpid())),
    ):
        yield


def _holder(fd: int) -> tuple[str, str]:
    """Who holds the lock of ``fd`` (``pid N`` or ``another process``) and what it does
    (``resume``, ``cancel``, or "" when it has not said)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").split()
    except OSError:
        text = []
    pid = text[0] if text and text[0].isdigit() else ""
    what = text[1] if len(text) > 1 else ""
    return (f"pid {pid}" if pid else "another process"), what


__all__ = [
    "RESUME_LOCK_WAIT_S",
    "Change",
    "busy",
    "changing",
    "lock_path",
    "resumer",
    "resuming",
    "writer_path",
]
