"""Waiting on several apps at once, each reported as soon as it ends."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from torchx.specs import AppStatus

# What a waiter thread reports: the handle, its status (None: unknown app) or the error.
_Outcome = tuple[str, AppStatus | None, BaseException | None]


def wait_each(
    wait_one: Callable[[str, float, float | None], AppStatus | None],
    handles: Sequence[str],
    timeout: float | None = None,
    wait_interval: float = 10,
) -> Iterator[tuple[str, AppStatus | None]]:
    """``(handle, status)`` for every handle, in the order the apps end.

    ``wait_one(handle, wait_interval, timeout)`` is ``Runner.wait``. Once ``timeout``
    seconds have passed, the apps still running are yielded with their last (non-terminal)
    status. A status of None means the scheduler does not know the app. An error asking a
    scheduler is raised once the apps asked before it have been yielded.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    outcomes: queue.Queue[_Outcome] = queue.Queue()

    def waiter(handle: str) -> None:
        try:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            outcomes.put((handle, wait_one(handle, wait_interval, left), None))
        except BaseException as e:  # handed to the caller's thread
            outcomes.put((handle, None, e))

    unique = list(dict.fromkeys(handles))
    # Daemons: an interrupted caller must not then wait for schedulers still answering.
    for handle in unique:
        threading.Thread(target=waiter, args=(handle,), daemon=True).start()
    for _ in unique:
        handle, status, error = outcomes.get()
        if error is not None:
            raise error
        yield handle, status
