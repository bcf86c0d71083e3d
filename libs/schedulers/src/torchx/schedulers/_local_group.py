"""One supervised group of local apps (a sweep's trials): at most K of them run at once.

Started as ``python -I -S _local_start.py _local_group K NAME`` with the apps'
directories on stdin, one a line, every file of each app already written
(``LocalScheduler.schedule_group``). It uses only the standard library, as the per-app
supervisor does, and starts once for the whole group. ``NAME`` only marks the command
line (``torchx`` finds the group by it).

Its apps are supervised by workers forked from it, never more than K busy at once. A
worker supervises one app at a time with ``_local_supervisor.Supervisor``, in a session
of its own, exactly as an app submitted alone (so every app id answers ``describe``,
``log`` and ``cancel`` the same way), then takes the next app the group gives it: there
is neither an interpreter start nor a fork per app, only one fork per worker.

- Apps start in the order given, a new one whenever one of the K running ends.
- This process is each app's watchdog (``_local_watchdog``): the worker supervising it
  tells it each replica group over a pipe, and ``done`` once the app's end is recorded.
  Should the worker die before that, the group kills those groups and records the app
  FAILED, as the watchdog a supervisor started alone forks for itself would; the next
  apps go to another worker.
- A worker cancels its app when the app's ``.torchx/cancel`` marker is there (on a
  signal, or at its once-a-second look): a signal sent for an app that ended meanwhile
  leaves the worker's next app alone (see ``Supervisor.shared``).
- An app not started yet that someone cancelled (its marker) is started at once, beyond
  K: its supervisor sees the marker and records it CANCELLED.
- SIGTERM or SIGINT stops the group: every app not started gets the cancel marker and is
  recorded CANCELLED through a supervisor; each running app is cancelled as ``cancel``
  does (marker, then SIGTERM to its worker); the group exits when all have ended.
"""

from __future__ import annotations

import io
import os
import select
import signal
import sys
import time

from torchx.schedulers._local_processes import (
    collect_from_now_on,
    load_process_helpers,
    process_parent_and_start,
)
from torchx.schedulers._local_state_files import CANCEL_FILE, META_DIR, SUPERVISOR_LOG
from torchx.schedulers._local_supervisor import Supervisor, supervise
from torchx.schedulers._local_supervisor_process import handle_waking_signals
from torchx.schedulers._local_watchdog import READ_PAUSE_S, Watchdog

# How often the group looks for cancel markers of apps it has not started.
_MARKER_CHECK_S = 1.0


def _marked(app_dir: str) -> bool:
    return os.path.exists(os.path.join(app_dir, META_DIR, CANCEL_FILE))


def _mark(app_dir: str) -> None:
    try:
        with open(os.path.join(app_dir, META_DIR, CANCEL_FILE), "w"):
            pass
    except OSError:
        pass  # its directory was deleted: its supervisor records that instead


class AppWatch(Watchdog):
    """The watchdog of one app, kept by the group (its worker's parent), not forked.

    It reads a replica's start token ``READ_PAUSE_S`` after it is told of the replica, as
    late as a forked watchdog that reads its pipe in batches may, not at once: told right
    after its start, the replica is still being exec'd, and reading its /proc entry then
    waits for that (about 0.2 ms, while the group starts no other app). An app that has
    ended by then needs no token at all.
    """

    def __init__(self, fd: int, meta: str, supervisor: int) -> None:
        super().__init__(fd, meta, supervisor)
        self.untimed: list[tuple[float, int]] = []  # (when due, pid): no token read yet

    def told(self, pid: int) -> None:
        self.untimed.append((time.monotonic() + READ_PAUSE_S, pid))

    def settle(self, now: float | None = None) -> float | None:
        """Read the start tokens due by ``now`` (None: all); when the next one is due."""
        while self.untimed and (now is None or self.untimed[0][0] <= now):
            super().told(self.untimed.pop(0)[1])
        return self.untimed[0][0] if self.untimed else None

    def stop_all(self) -> None:
        self.settle()
        super().stop_all()

    def supervisor_alive(self) -> bool:
        found = process_parent_and_start(self.supervisor)
        return found is not None and found[1] is not None  # not reaped, not a zombie


class Worker:
    """A process forked by the group that supervises the apps it is given, one at a time."""

    def __init__(self, pid: int, orders: int, reports: int) -> None:
        self.pid = pid
        # the write end of the pipe the worker reads its next app's directory from (a
        # line each); closed to tell it there is none
        self.orders: int | None = orders
        # the read end of the pipe the worker's supervisors write to (see ``Watchdog``)
        self.reports = reports
        self.app_dir = ""
        self.watch: AppWatch | None = None  # of the app it supervises now, if any


def _serve(orders: int, reports: int) -> int:
    """A worker's life: supervise each app the group names, until it names no more."""
    # A signal only wakes a supervisor, which then looks for its app's cancel marker: one
    # that comes between two apps has nothing to do. Set once for every app to come.
    handle_waking_signals()
    received = b""
    while True:
        while b"\n" not in received:
            chunk = os.read(orders, 65536)
            if not chunk:
                return 0
            received += chunk
        line, received = received.split(b"\n", 1)
        app_dir = os.fsdecode(line)
        log = _AppLog(os.path.join(app_dir, META_DIR, SUPERVISOR_LOG))
        sys.stdout = sys.stderr = log
        try:
            supervisor = Supervisor(app_dir, reports, shared=True)
            code = supervise(supervisor)
            if code != 0:
                return code  # it failed: this process may be in no state to go on
            supervisor.close()
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
            log.close()


class _AppLog(io.TextIOBase):
    """What an app's supervisor prints, appended to the app's ``supervisor.log``, which is
    made on the first write: most supervisors print nothing, and every file made costs
    (``supervisor_log_hint`` reads a missing log as an empty one). Without room for the
    file, the lines go to the group's log instead."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.file: io.TextIOWrapper | None = None

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.file is None:
            try:
                # kept open across writes, closed with the app (``close``)
                self.file = open(  # noqa: SIM115
                    self.path, "a", encoding="utf-8", errors="backslashreplace"
                )
            except OSError:
                return sys.__stderr__.write(text) if sys.__stderr__ else len(text)
        return self.file.write(text)

    def flush(self) -> None:
        if self.file is not None:
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
        super().close()


class Group:
    def __init__(self, parallel: int, app_dirs: list[str]) -> None:
        self.limit = parallel if parallel > 0 else len(app_dirs)
        self.pending = list(app_dirs)
        self.workers: set[int] = set()  # their pids, until reaped
        self.reporting: dict[int, Worker] = {}  # by their report pipe, until it closes
        self.stopping = False
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)

    def busy(self) -> int:
        return sum(1 for w in self.reporting.values() if w.watch is not None)

    def _fork_worker(self) -> Worker:
        orders_r, orders_w = os.pipe()
        reports_r, reports_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except BaseException:
            for fd in (orders_r, orders_w, reports_r, reports_w):
                os.close(fd)
            raise
        if pid == 0:
            code = 1
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                theirs = [w.orders for w in self.reporting.values() if w.orders is not None]
                for fd in (self.wake_r, self.wake_w, orders_w, reports_r, *self.reporting, *theirs):
                    os.close(fd)
                os.setsid()
                code = _serve(orders_r, reports_w)
            except BaseException:
                import traceback  # into the log of the app it was supervising

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        os.close(orders_r)
        os.close(reports_w)  # the worker's alone: its exit closes the pipe
        os.set_blocking(reports_r, False)
        worker = Worker(pid, orders_w, reports_r)
        self.workers.add(pid)
        self.reporting[reports_r] = worker
        return worker

    def start(self, app_dir: str) -> None:
        """Give the app to an idle worker, or to a new one."""
        while True:
            idle = [w for w in self.reporting.values() if w.watch is None and w.orders is not None]
            worker = idle[0] if idle else self._fork_worker()
            assert worker.orders is not None
            try:
                os.write(worker.orders, os.fsencode(app_dir) + b"\n")
                break
            except OSError:  # it has exited: its report pipe says so soon
                os.close(worker.orders)
                worker.orders = None
        worker.app_dir = app_dir
        worker.watch = AppWatch(worker.reports, os.path.join(app_dir, META_DIR), worker.pid)

    def dismiss_idle(self) -> None:
        """Tell the workers with no app that there is none to come: they exit."""
        for worker in self.reporting.values():
            if worker.watch is None and worker.orders is not None:
                os.close(worker.orders)
                worker.orders = None

    def stop(self) -> None:
        """Cancel every app: those not started get the marker (and start, to record it);
        running ones as ``cancel`` does."""
        self.stopping = True
        for app_dir in self.pending:
            _mark(app_dir)
        for worker in self.reporting.values():
            if worker.watch is not None:
                _mark(worker.app_dir)
                try:  # noqa: SIM105 -- no contextlib: importing it delays a group's first trial
                    os.kill(worker.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass

    def reap(self) -> None:
        while self.workers:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.workers.clear()
                return
            if pid == 0:
                return
            self.workers.discard(pid)

    def read_reports(self, fds: list[int]) -> None:
        """Take what workers told their app's watch. ``done``: the app's end is recorded
        and the worker is free. A pipe closed while an app is not done means its
        supervisor died: the app's groups are killed and its end recorded."""
        for fd in fds:
            worker = self.reporting[fd]
            while True:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if data:
                    if worker.watch is not None and worker.watch.feed(data):
                        worker.watch = None
                    continue
                del self.reporting[fd]
                os.close(fd)
                if worker.orders is not None:
                    os.close(worker.orders)
                    worker.orders = None
                watch, worker.watch = worker.watch, None
                if watch is not None:
                    try:
                        watch.stop_all()
                    except Exception:
                        import traceback  # into the group's log; the other apps go on

                        traceback.print_exc()
                break

    def settle_watches(self) -> float:
        """Read the start tokens now due (``AppWatch``); the seconds until the next is."""
        now = time.monotonic()
        timeout = _MARKER_CHECK_S
        for worker in self.reporting.values():
            due = worker.watch.settle(now) if worker.watch is not None else None
            if due is not None:
                timeout = min(timeout, max(due - now, 0.0))
        return timeout

    def wait(self, timeout: float) -> bool:
        """Sleep until a signal, a worker's word or ``timeout``; whether SIGTERM or
        SIGINT came."""
        stop = False
        ready, _, _ = select.select([self.wake_r, *self.reporting], [], [], timeout)
        self.read_reports([fd for fd in ready if fd != self.wake_r])
        try:
            while True:
                data = os.read(self.wake_r, 512)
                if not data:
                    break
                stop = stop or signal.SIGTERM in data or signal.SIGINT in data
        except BlockingIOError:
            pass
        return stop

    def run(self) -> int:
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        next_check = 0.0
        while self.pending or self.workers or self.reporting:
            now = time.monotonic()
            if self.stopping or now >= next_check:
                next_check = now + _MARKER_CHECK_S
                # as many again as K: a cancel need not wait for a free place
                for app_dir in [d for d in self.pending if _marked(d)]:
                    if self.busy() >= 2 * self.limit:
                        break
                    self.pending.remove(app_dir)
                    self.start(app_dir)
            while self.pending and self.busy() < self.limit:
                self.start(self.pending.pop(0))
            if not self.pending:
                self.dismiss_idle()
            if self.wait(self.settle_watches()) and not self.stopping:
                self.stop()
            self.reap()
        return 0


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[1].isdigit():
        print(f"usage: {argv[0]} PARALLEL NAME < APP_DIRS", file=sys.stderr)
        return 2
    load_process_helpers()  # once here, not in each worker; before the apps are told,
    # while the scheduler still writes their files
    app_dirs = [line for line in sys.stdin.read().splitlines() if line]
    # before the workers are forked: they then share what is frozen here untouched
    collect_from_now_on()
    return Group(int(argv[1]), app_dirs).run()
