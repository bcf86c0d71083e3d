"""The future of a Python function submitted as an app (see ``torchx.runner.Executor``)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from torchx.runner._call_lease import Lease
from torchx.specs import AppHandle, AppState, AppStatus

if TYPE_CHECKING:
    from torchx.runner._runner import Runner
    from torchx.runtime.function import Outcome, Store

# How many of the app's last log lines a FunctionAppError carries.
LOG_TAIL_LINES = 20
# How much of the status' structured error a FunctionAppError's message carries.
MAX_ERROR_CHARS = 500


class FunctionAppError(RuntimeError):
    """The app ended without the function's outcome: it died (out of memory, cancelled by
    someone else, its node lost, its image without torchx-runtime-function, ...).

    ``status`` is the app's final status, ``log_tail`` the last lines of its first
    replica's log, ``note`` what else is known (its call's folder is gone).
    """

    def __init__(
        self, handle: AppHandle, status: AppStatus | None, log_tail: list[str], note: str = ""
    ) -> None:
        self.handle = handle
        self.status = status
        self.log_tail = log_tail
        state = status.state.name if status is not None else "UNKNOWN (its scheduler forgot it)"
        state += _why(status) if status is not None else ""
        lines = "\n".join(f"  {line}" for line in log_tail) or "  (no log lines)"
        note = f"; {note}" if note else ""
        super().__init__(
            f"{handle} ended {state} without the function's result{note}; the last lines of "
            f"its log:\n{lines}"
        )


def _why(status: AppStatus) -> str:
    """What the status says about how the app ended (its message, else its replicas' exit
    codes, then its structured error, cut short), in parentheses; "" when it says nothing.
    An OOM kill (SIGKILL) and a function's own exit then read differently."""
    from torchx.schedulers.exit_codes import signal_name
    from torchx.specs import NONE

    msg = status.msg.strip()
    parts = [msg] if msg and msg.upper() != status.state.name else []  # not the state again
    replicas = [r for role in status.roles for r in role.replicas]
    if not parts:
        for r in replicas:
            if r.exit_code is None or r.exit_code == 0:
                continue
            parts.append(
                f"role '{r.role}' replica {r.id} exited with code {r.exit_code}"
                f"{signal_name(r.exit_code)}"
            )
    error = status.structured_error_msg
    if not error or error == NONE:
        error = next((r.structured_error_msg for r in replicas if r.structured_error_msg), "")
    error = " ".join(error.split()) if error != NONE else ""
    if error and not any(error in part for part in parts):  # not the message again
        cut = len(error) > MAX_ERROR_CHARS
        parts.append(f"error: {error[:MAX_ERROR_CHARS]}{' ...' if cut else ''}")
    return f" ({'; '.join(parts)})" if parts else ""


class FunctionFuture:
    """A function call running as an app, in the manner of ``concurrent.futures.Future``.

    ``handle`` is the app's handle; ``Executor.future(handle)`` rebuilds this future in any
    process. ``cancel()`` stops the app even when it already runs (unlike
    ``concurrent.futures``, whose running calls cannot be cancelled).

    Each rank's result is read at most once and kept here: once ``result()`` (or
    ``exception()``) has given the outcome of every rank, ``collect`` (when given: the
    executor's removal of the call's folder) runs, so the files live as long as someone may
    still need them and no longer, as an object in Ray's store lives while a reference to
    it does. Results larger than ``max_result_bytes`` are refused unread.
    """

    def __init__(
        self,
        runner: Runner,
        handle: AppHandle,
        store: Store,
        world_size: int,
        role: str,
        poll_interval: float,
        max_result_bytes: int | None = None,
        collect: Callable[[], None] | None = None,
    ) -> None:
        self.handle = handle
        self._runner = runner
        self._store = store
        self._world_size = world_size
        self._role = role
        self._poll_interval = poll_interval
        self._max_result_bytes = max_result_bytes
        self._collect = collect
        self._cancelled = False
        self._outcomes: dict[int, Outcome] = {}
        self._final: AppStatus | None = None
        # other processes' remove_ended_calls leave the folder while this may still give
        self._lease = Lease(self, store)

    def __repr__(self) -> str:
        state = "cancelled" if self._cancelled else "finished" if self._settled() else "pending"
        return f"<FunctionFuture {self.handle} {state}>"

    @property
    def world_size(self) -> int:
        """How many ranks run the function."""
        return self._world_size

    # -- state --------------------------------------------------------------------------

    def _read(self, rank: int) -> Outcome | None:
        if rank not in self._outcomes:
            from torchx.runtime.function import DEFAULT_MAX_RESULT_BYTES, read_outcome

            limit = self._max_result_bytes or DEFAULT_MAX_RESULT_BYTES
            found = read_outcome(self._store, rank, limit)
            if found is None:
                return None
            self._outcomes[rank] = found
        return self._outcomes[rank]

    def _ready(self, all_ranks: bool) -> bool:
        """Whether the outcome asked for is in: every rank's, or any rank's raise. Rank 0's
        return alone answers only a single rank: with several, another rank may still
        raise, and that fails the call as it fails a torchrun job."""
        first = self._read(0)
        if first is not None and (first.raised or (self._world_size == 1 and not all_ranks)):
            return True
        read = [self._read(r) for r in range(self._world_size)]
        return all(o is not None for o in read) or any(o is not None and o.raised for o in read)

    def _raised(self) -> Outcome | None:
        """The outcome to re-raise: rank 0's if it raised, else the lowest rank's that did."""
        for rank in sorted(self._outcomes):
            if self._outcomes[rank].raised:
                return self._outcomes[rank]
        return None

    def _settled(self) -> bool:
        # rank 0's return settles nothing while another rank may still raise
        return (
            self._cancelled
            or self._final is not None
            or len(self._outcomes) == self._world_size
            or self._raised() is not None
        )

    def _app_ended(self) -> bool:
        """Whether its app is known to have ended, or to end now: it was cancelled, an
        ended status was seen, or every rank wrote its outcome (its last act)."""
        return self._cancelled or self._final is not None or len(self._outcomes) == self._world_size

    def done(self) -> bool:
        """Whether the call finished (returned, raised, or its app ended) or was cancelled."""
        return self._finished(ask_scheduler=True)

    def _finished(self, ask_scheduler: bool) -> bool:
        """``done()``, asking the scheduler (a command or a request) only if told to."""
        if self._settled() or self._ready(all_ranks=False):
            return True
        if not ask_scheduler:
            return False
        return self._ends_with(self._runner.status(self.handle))

    def _ends_with(self, status: AppStatus | None) -> bool:
        """Whether the scheduler's answer ``status`` says the app ended (kept as final)."""
        if status is None or status.is_terminal():
            self._final = status if status is not None else AppStatus(AppState.UNKNOWN)
            return True
        return False

    def _raised_by_now(self) -> bool:
        """Whether the finished call raises, from what is known now: without the grace
        period ``result`` gives a late file, so ``wait(FIRST_EXCEPTION)`` keeps its
        timeout. Rank 0 raised, or its app ended without rank 0's result and did not
        succeed (it died, or the function raised); an app that succeeded returned, its
        result file still to show on a slow shared file system."""
        if self._cancelled:
            return False
        first = self._read(0)
        if first is not None:
            return first.raised
        return self._final is not None and self._final.state != AppState.SUCCEEDED

    def running(self) -> bool:
        """Whether the app is running now."""
        if self.done():
            return False
        status = self._runner.status(self.handle)
        return status is not None and status.state == AppState.RUNNING

    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> bool:
        """Stop the app. False when the call already finished, else True."""
        if self._cancelled:
            return True
        if self.done():
            return False
        self._runner.cancel(self.handle)
        self._cancelled = True
        self._lease.release()
        return True

    def _ended_with_its_sweep(self) -> None:
        """Its sweep was cancelled: the call is cancelled unless its outcome is in."""
        if not self._settled() and not self._ready(all_ranks=False):
            self._cancelled = True

    # -- outcome ------------------------------------------------------------------------

    def result(self, timeout: float | None = None, *, all_ranks: bool = False) -> Any:
        """The function's return value on rank 0, or with ``all_ranks`` a list of every
        rank's; with several ranks, once every rank returned (or the app succeeded).
        Re-raises what the function raised on any rank (rank 0's, else the lowest rank's
        that raised; its remote traceback as the cause);
        raises ``FunctionAppError`` when the app ended without an outcome,
        ``concurrent.futures.TimeoutError`` after ``timeout`` seconds and
        ``concurrent.futures.CancelledError`` after ``cancel()``."""
        self._wait(timeout, all_ranks)
        self._collected()
        raised = self._raised()
        if raised is not None:
            return raised.unwrap()
        if not all_ranks:
            return self._outcomes[0].value
        return [self._outcomes[rank].value for rank in range(self._world_size)]

    def _may_still_give(self) -> bool:
        """Whether the call's folder holds an outcome this future has not read yet and may
        still give (it was not cancelled): until it has, the folder must stay."""
        from torchx.runtime.function import has_outcome

        if self._cancelled:
            return False
        unread = (r for r in range(self._world_size) if r not in self._outcomes)
        return any(has_outcome(self._store, rank) for rank in unread)

    def _collected(self) -> None:
        """Once every rank's outcome is held here, the call's files are no longer needed:
        run ``collect`` (once). Until then another rank may still be writing its outcome."""
        if len(self._outcomes) >= self._world_size:
            self._lease.release()
        if self._collect is None or len(self._outcomes) < self._world_size:
            return
        collect, self._collect = self._collect, None
        collect()

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """What the call raised (rank 0's, or the first rank's that raised; a
        ``FunctionAppError`` when its app died), else None. Like ``result``, raises after
        ``timeout`` seconds or a ``cancel()``."""
        import concurrent.futures

        try:
            self.result(timeout)
        except (concurrent.futures.CancelledError, concurrent.futures.TimeoutError):
            raise
        except BaseException as e:
            return e
        return None

    def _wait(self, timeout: float | None, all_ranks: bool) -> None:
        """Until the outcome asked for is in, or the app ended without it.

        The outcome files are looked at often (a pause of a twentieth of the time waited so
        far, so the result is seen soon after it is written and a long call costs few
        looks); the scheduler, whose answer may cost a command or a request, is asked
        every ``poll_interval`` seconds.
        """
        # imported here: ``import torchx.runner`` (and the CLI) stays without it
        import concurrent.futures

        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        next_status = start + self._poll_interval
        while True:
            if self._cancelled:
                raise concurrent.futures.CancelledError(f"{self.handle} was cancelled")
            if self._ready(all_ranks):
                return
            if self._final is not None:
                self._ended(self._final, all_ranks)
                return
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise concurrent.futures.TimeoutError(
                    f"{self.handle} has not finished after {timeout} s"
                )
            if now >= next_status:
                if self._ends_with(self._runner.status(self.handle)):
                    continue
                next_status = time.monotonic() + self._poll_interval
            pause = min(max((now - start) / 20, 0.002), next_status - now)
            if deadline is not None:
                pause = min(pause, deadline - now)
            time.sleep(max(pause, 0.0))

    def _ended(self, status: AppStatus, all_ranks: bool) -> None:
        """The app ended without the outcome asked for: some rank's raise explains it, or
        the app died and this raises FunctionAppError.

        The files are looked for during two ``poll_interval`` more: a shared file system
        (NFS on a Slurm cluster) may show a file another node wrote a little later.
        """
        grace_ends = time.monotonic() + 2 * self._poll_interval
        while True:
            for rank in range(self._world_size):
                self._read(rank)
            if self._ready(all_ranks) or self._raised() is not None:
                return
            if status.state == AppState.SUCCEEDED and 0 in self._outcomes and not all_ranks:
                return  # no rank failed: rank 0's value, the others' files may show late
            if time.monotonic() >= grace_ends:
                self._lease.release()
                raise FunctionAppError(self.handle, status, self._log_tail(), self._gone())
            time.sleep(min(0.1, self._poll_interval))

    def _gone(self) -> str:
        """Why the outcome cannot be found when the call's folder is gone, else ""."""
        from torchx.runtime.function import CALL_META

        if self._store.exists(CALL_META):
            return ""
        return (
            f"its call's folder {self._store.url} is gone: another future of the call removed "
            "it once it gave the result, or remove_ended_calls() or a person did "
            "(Executor(keep_calls=True) keeps calls)"
        )

    def _log_tail(self) -> list[str]:
        try:
            lines = self._runner.log_lines(self.handle, self._role, 0)
            return [line.rstrip("\n") for line in deque(lines, maxlen=LOG_TAIL_LINES)]
        except Exception as e:  # the log is a courtesy: its absence must not hide the status
            return [f"(its log could not be read: {e})"]


class DoneAndNotDone(NamedTuple):
    """What ``wait`` gives: the futures that finished and those that did not."""

    done: set[FunctionFuture]
    not_done: set[FunctionFuture]


ALL_COMPLETED = "ALL_COMPLETED"
FIRST_COMPLETED = "FIRST_COMPLETED"
FIRST_EXCEPTION = "FIRST_EXCEPTION"


def _checked(futures: Iterable[FunctionFuture], caller: str) -> set[FunctionFuture]:
    """The futures given; a one-line TypeError naming anything that is not one."""
    if isinstance(futures, (str, bytes, FunctionFuture)) or not isinstance(futures, Iterable):
        raise TypeError(_not_futures(caller, futures, "give a list of FunctionFutures"))
    checked: set[FunctionFuture] = set()
    for future in futures:
        if not isinstance(future, FunctionFuture):
            raise TypeError(_not_futures(caller, future, "give only FunctionFutures"))
        checked.add(future)
    return checked


def _not_futures(caller: str, value: object, fix: str) -> str:
    return (
        f"torchx.runner.{caller}: got {value!r}; {fix} (for an app handle use "
        f"Runner.wait(handle), for a concurrent.futures.Future concurrent.futures.{caller})"
    )


def _ask_schedulers(futures: Iterable[FunctionFuture]) -> list[FunctionFuture]:
    """Those of ``futures`` whose apps ended. Each runner asks each scheduler once for all
    of its apps (one sacct on Slurm), not once per app."""
    by_runner: dict[int, list[FunctionFuture]] = {}
    for future in futures:
        by_runner.setdefault(id(future._runner), []).append(future)
    ended: list[FunctionFuture] = []
    for group in by_runner.values():
        statuses = group[0]._runner._statuses([f.handle for f in group])
        ended.extend(f for f in group if f._ends_with(statuses.get(f.handle)))
    return ended


def _looks(futures: set[FunctionFuture], timeout: float | None) -> Iterator[list[FunctionFuture]]:
    """At each look, every future of ``futures`` found finished since the look before; once
    ``timeout`` passes, TimeoutError naming how many are left.

    The outcome files are looked at often: after a pause of a twentieth of the time waited
    so far, and at least as long as the last look took. The schedulers are asked at the
    futures' ``poll_interval``, counted from the end of the previous ask: however long an
    ask takes, a whole interval passes before the next.
    """
    import concurrent.futures

    pending = set(futures)
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    interval = min((f._poll_interval for f in pending), default=1.0)
    next_ask = start  # the first look asks the schedulers too
    while pending:
        began = time.monotonic()
        finished = [f for f in pending if f._finished(ask_scheduler=False)]
        took = time.monotonic() - began
        if began >= next_ask:
            finished += _ask_schedulers(pending.difference(finished))
            next_ask = time.monotonic() + interval
        if finished:
            pending.difference_update(finished)
            yield finished
            if not pending:
                return
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            raise concurrent.futures.TimeoutError(
                f"{len(pending)} of {len(futures)} function apps unfinished after {timeout} s "
                f"(e.g. {min(f.handle for f in pending)}); wait longer or cancel() them"
            )
        pause = min(max((now - start) / 20, took, 0.002), next_ask - now)
        if deadline is not None:
            pause = min(pause, deadline - now)
        time.sleep(max(pause, 0.0))


def as_completed(
    futures: Iterable[FunctionFuture], timeout: float | None = None
) -> Iterator[FunctionFuture]:
    """The futures as they finish (returned, raised, app ended, or cancelled), in the manner
    of ``concurrent.futures.as_completed``; ``concurrent.futures.TimeoutError`` if some are
    still running ``timeout`` seconds after the call."""
    looks = _looks(_checked(futures, "as_completed"), timeout)
    return (future for finished in looks for future in finished)


def wait(
    futures: Iterable[FunctionFuture],
    timeout: float | None = None,
    return_when: str = ALL_COMPLETED,
) -> DoneAndNotDone:
    """Wait for the futures, in the manner of ``concurrent.futures.wait``: until all finish
    (``ALL_COMPLETED``), the first does (``FIRST_COMPLETED``), the first raises
    (``FIRST_EXCEPTION``), or ``timeout`` seconds pass (then without raising). ``done``
    holds every future found finished by then, not only the first."""
    import concurrent.futures

    if return_when not in (ALL_COMPLETED, FIRST_COMPLETED, FIRST_EXCEPTION):
        from torchx.specs import SpecsError

        raise SpecsError(
            "wait return_when",
            return_when,
            "give ALL_COMPLETED, FIRST_COMPLETED or FIRST_EXCEPTION",
        )
    waiting = _checked(futures, "wait")
    done: set[FunctionFuture] = set()
    try:
        for finished in _looks(waiting, timeout):
            done.update(finished)
            if return_when == FIRST_COMPLETED:
                break
            if return_when == FIRST_EXCEPTION and any(f._raised_by_now() for f in finished):
                break
    except concurrent.futures.TimeoutError:
        pass
    return DoneAndNotDone(done, waiting - done)
