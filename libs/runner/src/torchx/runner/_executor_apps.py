"""The apps an Executor submitted, held for as long as it may have to stop or wait for them."""

from __future__ import annotations

import contextlib
import itertools
import sys
import weakref
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from torchx.runner._function_future import FunctionFuture
    from torchx.runner._runner import Runner
    from torchx.specs import AppHandle, AppStatus

_T = TypeVar("_T")

# How many apps an executor holds before it first looks for the ended ones among them; it
# looks again each time that number has doubled since (so the looks cost O(1) per submit).
FIRST_LOOK = 1024
# How many apps the schedulers are asked about at once, by a look and by
# ``remove_ended_calls``.
STATUS_BATCH = 1000


def statuses_in_batches(
    runner: Runner, apps: Iterable[tuple[AppHandle, _T]]
) -> Iterator[tuple[AppHandle, _T, AppStatus | None]]:
    """Each app's status with what the caller holds beside its handle, the schedulers
    asked ``STATUS_BATCH`` apps at a time (one ``sacct`` per batch on Slurm), so that
    only one batch of ``apps`` is held at once."""
    rest = iter(apps)
    while batch := dict(itertools.islice(rest, STATUS_BATCH)):
        for handle, status in runner._statuses(list(batch)).items():
            yield handle, batch[handle], status


class SubmittedApps:
    """The apps an executor submitted that may still run: each by its handle, with a weak
    reference to its future, in the order they were submitted.

    ``shutdown(wait=True)`` waits for them, and leaving a ``with`` block on Ctrl-C cancels
    them, whether or not their futures are still referenced, as a process pool's shutdown
    covers every call submitted. The reference is weak so that the executor keeps alive
    neither a future its caller dropped nor the outcome that future holds: the call of
    such a future is then one ``remove_ended_calls`` takes once its app ended. An app is
    forgotten once it is known to have ended: when its future saw so (it holds every
    rank's outcome, saw the app end, or cancelled it), or, for a future that is gone, when
    its scheduler says so, asked each time the number held has doubled. Memory grows with
    the apps that may still run, not with every call an executor made.
    """

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._apps: dict[AppHandle, weakref.ref[FunctionFuture]] = {}
        self._next_look = FIRST_LOOK

    def __len__(self) -> int:
        return len(self._apps)

    def add(self, futures: Iterable[FunctionFuture]) -> None:
        for future in futures:
            self._apps[future.handle] = weakref.ref(future)
        if len(self._apps) >= self._next_look:
            # a scheduler that cannot answer now is asked again at the next look; the
            # app just submitted is held either way
            with contextlib.suppress(Exception):
                self.forget_ended()
            self._next_look = max(FIRST_LOOK, 2 * len(self._apps))

    def forget_ended(self) -> None:
        """Forget the apps known to have ended; the schedulers are asked about those whose
        futures are gone, in batches (one ``sacct`` per batch on Slurm)."""
        orphans: list[tuple[AppHandle, weakref.ref[FunctionFuture]]] = []
        for handle, ref in list(self._apps.items()):
            future = ref()
            if future is None:
                orphans.append((handle, ref))
            elif future._app_ended():
                del self._apps[handle]
        for handle, _, status in statuses_in_batches(self._runner, orphans):
            if status is None or status.is_terminal():
                self._apps.pop(handle, None)

    def held(self) -> list[tuple[AppHandle, FunctionFuture | None]]:
        """Each app held and its future (None when nobody references it any more)."""
        return [(handle, ref()) for handle, ref in self._apps.items()]

    def cancel(self, handle: AppHandle, future: FunctionFuture | None) -> None:
        """Stop the app: through its future when there is one, so that it says cancelled."""
        if future is not None:
            future.cancel()
        else:
            self._runner.cancel(handle)

    def wait(self, poll_interval: float) -> None:
        """Until every app held ended, but for those cancelled through their futures."""
        for handle, future in self.held():
            if future is None or not future.cancelled():
                self._runner.wait(handle, wait_interval=poll_interval)

    def stop_all(self, stop: type[BaseException]) -> None:
        """Cancel every app held, while ``stop`` (Ctrl-C, SIGTERM) propagates.

        Nothing here may replace ``stop``: each cancel is tried on its own, so one that
        fails leaves no other app running, and a failure is one line on stderr naming the
        app and how to stop it by hand. A second stop during a cancel ends the cancelling:
        one line names every app not cancelled yet and how to stop them, and the second
        stop propagates.
        """
        held = self.held()
        for done, (handle, future) in enumerate(held):
            try:
                self.cancel(handle, future)
            except BaseException as e:
                # SIGTERM's SignalException is an Exception: a stop, not a failed cancel
                if isinstance(e, Exception) and not is_a_stop(type(e)):
                    report(
                        f"on {stop.__name__}, could not cancel {handle}"
                        f" ({type(e).__name__}: {e}); stop it with: torchx cancel {handle}"
                    )
                    continue
                left = [h for h, _ in held[done:]]
                report(
                    f"on {stop.__name__}, a {type(e).__name__} stopped the cancelling;"
                    f" {len(left)} app(s) may still run; stop them with: "
                    + "; ".join(f"torchx cancel {h}" for h in left)
                )
                raise


def is_a_stop(exc_type: type[BaseException]) -> bool:
    """Whether leaving with ``exc_type`` means the program was told to stop."""
    if issubclass(exc_type, KeyboardInterrupt):
        return True
    # SignalException can only have been raised if its module was loaded: never load it
    # on the way out of an ordinary error.
    local = sys.modules.get("torchx.schedulers.local_scheduler")
    return local is not None and issubclass(exc_type, local.SignalException)


def report(line: str) -> None:
    """One line on stderr: while a stop propagates there is no caller to raise to."""
    print(f"torchx Executor: {' '.join(line.split())}", file=sys.stderr)
