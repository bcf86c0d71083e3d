"""Turns a warning signal into the app's checkpoint and an exit that asks for a requeue."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import NoReturn, TypeVar

from torchx.runtime.preemption._contract import (
    ASKED_FILE_ENV,
    REQUEUE_EXIT_CODE,
    warning_signals,
)

__all__ = ["install", "on_preempt", "preempted", "requeue", "warned_by"]

Checkpoint = TypeVar("Checkpoint", bound=Callable[[], object])


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.installed: tuple[signal.Signals, ...] = ()
        self.checkpoints: list[Callable[[], object]] = []
        self.warned: signal.Signals | None = None
        # Once the app polls ``preempted()`` it chooses when to stop; until then the
        # warning itself checkpoints and exits.
        self.polling = False
        self.requeuing = False


_STATE = _State()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    # Python runs this in the main thread between two bytecodes: raising SystemExit here
    # unwinds the app as an exception would, ``finally`` blocks included.
    _STATE.warned = signal.Signals(signum)
    if not _STATE.polling and not _STATE.requeuing:
        requeue()


def install(signals: tuple[signal.Signals, ...] | None = None) -> None:
    """Listen for the warning signals (``$TORCHX_PREEMPT_SIGNALS``, else SIGUSR1 and
    SIGTERM). ``on_preempt`` and ``preempted`` call it; calling it again does nothing.
    Must run in the main thread, as Python sets signal handlers only there."""
    wanted = signals if signals is not None else warning_signals()
    with _STATE.lock:
        missing = [s for s in wanted if s not in _STATE.installed]
        if not missing:
            return
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError(
                "torchx.runtime.preemption listens for signals, which Python allows only in "
                "the main thread; call on_preempt() or preempted() there first"
            )
        for sig in missing:
            signal.signal(sig, _on_signal)
        _STATE.installed = (*_STATE.installed, *missing)


def on_preempt(fn: Checkpoint) -> Checkpoint:
    """Register ``fn`` to checkpoint the app when it is warned of a stop; usable as a
    decorator. Functions run in the order registered, once, before the requeue exit.

    Unless the app polls ``preempted()``, the warning runs them at once (in the main
    thread, wherever the app is) and the app exits asking to be run again."""
    install()
    with _STATE.lock:
        _STATE.checkpoints.append(fn)
    return fn


def preempted() -> bool:
    """True once the scheduler warned of a stop. A training loop polls it between steps
    and calls ``requeue()`` at a point where the state is whole (from its first call on, a
    warning waits for the loop; before it, the warning stops the app at once)::

        for step in range(start, steps):
            train_step()
            if preempted():
                requeue()          # runs the on_preempt functions, then exits
    """
    install()
    _STATE.polling = True
    return _STATE.warned is not None


def warned_by() -> signal.Signals | None:
    """The signal that warned the app, or None while it has not been warned."""
    return _STATE.warned


def requeue() -> NoReturn:
    """Run the registered checkpoint functions, then exit with ``REQUEUE_EXIT_CODE`` so the
    scheduler runs the app again (its next ``attempt()`` is one more).

    Called without a warning, it asks for a requeue all the same (the app saw that its
    time is nearly up); schedulers cap such requeues, and not those after a preemption."""
    _STATE.requeuing = True
    with _STATE.lock:
        checkpoints, _STATE.checkpoints = list(_STATE.checkpoints), []
    for fn in checkpoints:
        fn()
    asked = os.environ.get(ASKED_FILE_ENV)
    if asked:
        # best effort: the exit code still asks where nothing rewrites it
        with contextlib.suppress(OSError), open(asked, "a"):
            pass
    for stream in (sys.stdout, sys.stderr):
        # a closed or broken stream must not stop the exit
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    raise SystemExit(REQUEUE_EXIT_CODE)
