"""Who is resuming a sweep: an advisory lock on ``<sweep id>.lock`` beside its record.

A resume holds the lock exclusively from its plan until the record names its new
submissions, so two resumes of one sweep cannot both submit, and ``status``/``wait``
can tell a sweep being resumed (not ended) from one that ended. The lock is the kernel's
(``flock``): it goes with the process that holds it, however it ends, so a crashed
resume leaves nothing behind and its sweep reads as it was before. Nothing is written
into the record for it (older readers keep reading records). The holder's pid is written
into the lock file for the user's information only; nothing decides by it.

The lock file stays once made: removing a file others may have open would let two
processes lock two different files of one name.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from torchx.runner._sweep_record import record_path
from torchx.specs import SpecsError


def lock_path(sweep_id: str) -> Path:
    return record_path(sweep_id).with_suffix(".lock")


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
            return _holder(fd)
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


@contextlib.contextmanager
def resuming(sweep_id: str, handle: str) -> Iterator[None]:
    """Hold the sweep's resume lock for the block; a :class:`SpecsError` naming the other
    resume at once if one holds it."""
    import fcntl

    path = lock_path(sweep_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The record's own permissions (the umask's): whoever may read the record may see
        # that it is being resumed.
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as e:
        raise SpecsError(
            "--resume",
            handle,
            f"cannot open {path} ({e.strerror}); resume it as the user who submitted it, "
            "with its state directory writable",
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy(handle, _holder(fd)) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            yield
        finally:
            # A reader then sees no pid rather than one that no longer resumes.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"pid {text}" if text.isdigit() else "another process"


__all__ = ["busy", "lock_path", "resumer", "resuming"]
