"""Which calls a live process may still read: a future holds a shared ``flock`` on its
call's folder while it may still give an outcome, and ``remove_ended_calls`` (in any
process) leaves a folder it cannot lock exclusively.

The operating system drops the lock when the holder closes it, is collected, or its
process ends however it ends (killed included), so no lock outlives its holder and no
stale lease needs expiring. Local folders only: an object store has no locks, so there
``remove_ended_calls`` must not run while another program waits on the same transport.
"""

from __future__ import annotations

import contextlib
import os
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchx.runtime.function import Store


def _open(call: Store | None) -> int | None:
    """A descriptor of the call's local folder, or None (no call, remote, or gone
    meanwhile)."""
    if call is None or not call.local:
        return None
    try:
        return os.open(call.path(""), os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None


class Lease:
    """A shared lock on a call's folder, released by ``release()``, on collection, or when
    the process ends."""

    def __init__(self, owner: object, call: Store) -> None:
        import fcntl

        fd = _open(call)
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)
            except OSError:  # a file system without locks: nothing held
                os.close(fd)
                fd = None
        self._closer = None if fd is None else weakref.finalize(owner, os.close, fd)

    def release(self) -> None:
        if self._closer is not None:
            self._closer()


@contextlib.contextmanager
def unheld(call: Store | None) -> Iterator[bool]:
    """Whether no live future (in any process) holds a lease on ``call``; when none does,
    the folder stays locked against new leases until the block ends (while it is removed).
    Without a call (None) nothing can hold it: True."""
    import fcntl

    fd = _open(call)
    if fd is None:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        except OSError:  # a file system without locks: nothing can be known held
            pass
        yield True
    finally:
        os.close(fd)
