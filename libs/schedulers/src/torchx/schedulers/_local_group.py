"""One supervised group of local apps (a sweep's trials): at most K of them run at once.

Started as ``python -I -S _local_group.py K NAME`` with the apps' directories on stdin,
one a line, every file of each app already written (``LocalScheduler.schedule_group``).
It uses only the standard library, as the per-app supervisor does, and starts once for
the whole group: each app is then supervised by ``_local_supervisor.Supervisor`` in a
process forked from this one (no interpreter start per app), in a session of its own,
exactly as an app submitted alone, so every app id answers ``describe``, ``log`` and
``cancel`` the same way. ``NAME`` only marks the command line (``torchx`` finds the
group by it).

- Apps start in the order given, a new one whenever one of the K running ends.
- This process is each app's watchdog (``_local_watchdog``): its supervisor, forked from
  here, tells it each replica group over a pipe; should the supervisor die without
  saying ``done``, the group kills those groups and records the app FAILED, as the
  watchdog a supervisor started alone forks for itself would (one process fewer per app).
- An app not started yet that someone cancelled (its ``.torchx/cancel`` marker) is
  started at once, beyond K: its supervisor sees the marker and records it CANCELLED.
- SIGTERM or SIGINT stops the group: every app not started gets the cancel marker and is
  recorded CANCELLED through its supervisor; each running app is cancelled as ``cancel``
  does (marker, then SIGTERM to its supervisor); the group exits when all have ended.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

if __name__ == "__main__":
    # As ``_local_supervisor``: run with ``-I -S``, add the directory that holds ``torchx/``.
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from torchx.schedulers._local_processes import load_process_helpers, process_parent_and_start
from torchx.schedulers._local_state_files import CANCEL_FILE, META_DIR, SUPERVISOR_LOG
from torchx.schedulers._local_supervisor import main as supervise
from torchx.schedulers._local_watchdog import Watchdog

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
    """The watchdog of one app, kept by the group (its supervisor's parent), not forked."""

    def supervisor_alive(self) -> bool:
        found = process_parent_and_start(self.supervisor)
        return found is not None and found[1] is not None  # not reaped, not a zombie


class Group:
    def __init__(self, parallel: int, app_dirs: list[str]) -> None:
        self.limit = parallel if parallel > 0 else len(app_dirs)
        self.pending = list(app_dirs)
        self.running: dict[int, str] = {}  # supervisor pid -> app directory
        self.watches: dict[int, AppWatch] = {}  # pipe from a supervisor -> its watch
        self.stopping = False
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)

    def start(self, app_dir: str) -> None:
        """Fork the app's supervisor; in the child, run it as ``_local_supervisor`` would
        run when started on its own, but with this process as its watchdog: the supervisor
        tells it each replica group over a pipe (see ``Watchdog``)."""
        try:
            log = os.open(
                os.path.join(app_dir, META_DIR, SUPERVISOR_LOG),
                os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                0o644,
            )
        except OSError:
            log = os.open(os.devnull, os.O_WRONLY)
        guard_r, guard_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except BaseException:
            for fd in (log, guard_r, guard_w):
                os.close(fd)
            raise
        if pid == 0:
            code = 1
            try:
                signal.set_wakeup_fd(-1)
                for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
                    signal.signal(sig, signal.SIG_DFL)
                for fd in (self.wake_r, self.wake_w, guard_r, *self.watches):
                    os.close(fd)
                os.setsid()
                os.dup2(log, 1)
                os.dup2(log, 2)
                os.close(log)
                code = supervise(["_local_supervisor.py", app_dir], guard_w)
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
        os.close(log)
        os.close(guard_w)  # the supervisor's alone: its exit closes the pipe
        os.set_blocking(guard_r, False)
        self.watches[guard_r] = AppWatch(guard_r, os.path.join(app_dir, META_DIR), pid)
        self.running[pid] = app_dir

    def stop(self) -> None:
        """Cancel every app: those not started get the marker (and start, to record it);
        running ones as ``cancel`` does."""
        self.stopping = True
        for app_dir in self.pending:
            _mark(app_dir)
        for pid, app_dir in self.running.items():
            _mark(app_dir)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def reap(self) -> None:
        while self.running:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.running.clear()
                return
            if pid == 0:
                return
            self.running.pop(pid, None)

    def read_watches(self, fds: list[int]) -> None:
        """Take what supervisors told their watch. A pipe closed without ``done`` first
        means its supervisor died: the app's groups are killed and its end recorded."""
        for fd in fds:
            watch = self.watches[fd]
            while True:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if data and not watch.feed(data):
                    continue
                del self.watches[fd]
                os.close(fd)
                if not data:
                    try:
                        watch.stop_all()
                    except Exception:
                        import traceback  # into the group's log; the other apps go on

                        traceback.print_exc()
                break

    def wait(self, timeout: float) -> bool:
        """Sleep until a signal, a supervisor's word or ``timeout``; whether SIGTERM or
        SIGINT came."""
        stop = False
        ready, _, _ = select.select([self.wake_r, *self.watches], [], [], timeout)
        self.read_watches([fd for fd in ready if fd != self.wake_r])
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
        while self.pending or self.running or self.watches:
            now = time.monotonic()
            if self.stopping or now >= next_check:
                next_check = now + _MARKER_CHECK_S
                # as many again as K: a cancel need not wait for a free place
                for app_dir in [d for d in self.pending if _marked(d)]:
                    if len(self.running) >= 2 * self.limit:
                        break
                    self.pending.remove(app_dir)
                    self.start(app_dir)
            while self.pending and len(self.running) < self.limit:
                self.start(self.pending.pop(0))
            if self.wait(_MARKER_CHECK_S) and not self.stopping:
                self.stop()
            self.reap()
        return 0


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[1].isdigit():
        print(f"usage: {argv[0]} PARALLEL NAME < APP_DIRS", file=sys.stderr)
        return 2
    load_process_helpers()  # once here, not in each app's supervisor; before the apps
    # are told, while the scheduler still writes their files
    app_dirs = [line for line in sys.stdin.read().splitlines() if line]
    return Group(int(argv[1]), app_dirs).run()


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
