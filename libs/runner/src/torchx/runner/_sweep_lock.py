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
another writer. A bounded retry instead would still fail against a reader descheduled for
longer than its bound, and would report "another resume" when there is none.

The locks are the kernel's (``flock``): they go with the process that holds them, however
it ends, so a crashed resume or cancel leaves nothing behind and its sweep reads as it was
before. Nothing is written into the record for them (older readers keep reading records).
The holder writes its pid into the files for the user's information only; nothing decides
by it. The files stay once made: removing a file others may have open would let two
processes lock two different files of one name.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from torchx.runner._sweep_record import record_path
from torchx.specs import SpecsError

Change = Literal["resume", "cancel"]


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

    try:
        fd = os.open(lock_path(sweep_id), os.O_RDONLY)
    except OSError:  # never resumed (no file), or unreadable: nothing says it is
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fd)[0]
        except OSError:  # no file locks here (ENOLCK): no resume can hold one either
            return None
        return None
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
        # The record's own permissions (the umask's): whoever may read the record may see
        # that it is being changed.
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


@contextlib.contextmanager
def _says(fd: int, text: str) -> Iterator[None]:
    """``text`` in the held lock file for the block; emptied after, so a reader then sees
    no pid rather than one that no longer holds it."""
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
    import fcntl

    path = writer_path(sweep_id)
    fd = _open(path, mine, handle)
    try:
        try:
            held = _lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, path, mine, handle)
        except BlockingIOError:
            raise _refusal(mine, handle, *_holder(fd)) from None
        if not held:
            yield
            return
        with _says(fd, f"{os.getpid()} {mine}"):
            yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def resuming(sweep_id: str, handle: str) -> Iterator[None]:
    """Hold the sweep's writer lock and resume lock for the block (``status`` then reads the
    sweep as being resumed); a :class:`SpecsError` naming the other resume or cancel at
    once if one holds the writer lock."""
    import fcntl

    with changing(sweep_id, handle, "resume"):
        path = lock_path(sweep_id)
        fd = _open(path, "resume", handle)
        try:
            # Waits, never refuses: with the writer lock held, only readers' instants
            # (see the module's docstring) can stand in the way.
            _lock(fd, fcntl.LOCK_EX, path, "resume", handle)
            with _says(fd, str(os.getpid())):
                yield
        finally:
            os.close(fd)  # releases the lock


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


__all__ = ["Change", "busy", "changing", "lock_path", "resumer", "resuming", "writer_path"]
