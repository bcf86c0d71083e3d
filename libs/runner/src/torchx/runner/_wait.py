"""Waiting on several apps at once, each reported as soon as it ends."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

# An app's status, or a sweep's; None: the scheduler does not know the app.
_S = TypeVar("_S")


def wait_each(
    wait_one: Callable[[str, float, float | None], _S | None],
    handles: Sequence[str],
    timeout: float | None = None,
    wait_interval: float = 10,
    wait_group: Callable[[Sequence[str], float, float | None], Iterable[tuple[str, _S | None]]]
    | None = None,
    groups: Mapping[str, str] | None = None,
) -> Iterator[tuple[str, _S | None]]:
    """``(handle, status)`` for every handle, in the order the apps end.

    ``wait_one(handle, wait_interval, timeout)`` waits on one app (or sweep). Handles that
    ``groups`` maps to the same key are waited on together by one
    ``wait_group(handles, wait_interval, timeout)``, which yields each as it ends. Once
    ``timeout`` seconds have passed, the apps still running are yielded with their last
    (non-terminal) status. A status of None means the scheduler does not know the app.
    An error asking a scheduler is raised once the apps asked before it have been yielded.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    # what a waiter thread reports: the handle, its status or the error
    outcomes: queue.Queue[tuple[str, _S | None, BaseException | None]] = queue.Queue()

    def left() -> float | None:
        return None if deadline is None else max(deadline - time.monotonic(), 0.0)

    def waiter(handle: str) -> None:
        try:
            outcomes.put((handle, wait_one(handle, wait_interval, left()), None))
        except BaseException as e:  # handed to the caller's thread
            outcomes.put((handle, None, e))

    def group_waiter(members: list[str]) -> None:
        assert wait_group is not None
        try:
            for handle, status in wait_group(members, wait_interval, left()):
                outcomes.put((handle, status, None))
        except BaseException as e:
            outcomes.put((members[0], None, e))

    unique = list(dict.fromkeys(handles))
    together: dict[str, list[str]] = {}
    # Daemons: an interrupted caller must not then wait for schedulers still answering.
    for handle in unique:
        key = (groups or {}).get(handle) if wait_group is not None else None
        if key is None:
            threading.Thread(target=waiter, args=(handle,), daemon=True).start()
        else:
            together.setdefault(key, []).append(handle)
    for members in together.values():
        threading.Thread(target=group_waiter, args=(members,), daemon=True).start()
    for _ in unique:
        handle, status, error = outcomes.get()
        if error is not None:
            raise error
        yield handle, status
