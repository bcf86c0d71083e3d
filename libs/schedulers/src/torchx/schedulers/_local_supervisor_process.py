"""What a supervisor's process holds for every app it supervises, made once per process.

A plain supervisor supervises one app; a group's worker (``_local_group``) supervises
app after app in one process. What belongs to the process rather than to an app (its
start token and environment, ``/dev/null`` for the replicas' stdin, the pipe signals
wake it through, being a subreaper) is the same for each of them, so it is made or
asked for once, not again for every app. The working directory is not kept here: each
app changes to its replicas' afresh (``Supervisor._start``).

Standard library only (the supervisor imports it; see ``_local_state_files``).
"""

from __future__ import annotations

import os
import signal

from torchx.schedulers._local_processes import become_subreaper, process_start_token


class SupervisorProcess:
    """This process, as its supervisors use it (``this_process``)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.start_token = process_start_token(self.pid)
        # the replicas' environment starts from this copy
        self.env = dict(os.environ)
        self.devnull = os.open(os.devnull, os.O_RDONLY)
        # Python's C handler writes each signal's number here (``Supervisor.install``).
        # Between two apps nothing is written (``Supervisor.close`` unsets it); a byte
        # left by the last app's end is only a wakeup to the next, which then looks.
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self._subreaper: bool | None = None

    def subreaper(self) -> bool:
        """Become the subreaper of this process's orphaned descendants (once: it stays
        so for the life of the process); whether it is one."""
        if self._subreaper is None:
            self._subreaper = become_subreaper()
        return self._subreaper

    def close(self) -> None:
        """Close what this process's copy holds (in a forked child, which makes its own)."""
        for fd in (self.devnull, self.wake_r, self.wake_w):
            try:  # noqa: SIM105 -- contextlib stays unimported: imports delay the replicas
                os.close(fd)
            except OSError:
                pass


_this: SupervisorProcess | None = None


def this_process() -> SupervisorProcess:
    """This process, made on the first call in it (by pid: a forked child makes its own
    and closes what it inherited)."""
    global _this
    if _this is None or _this.pid != os.getpid():
        if _this is not None:
            _this.close()
        _this = SupervisorProcess()
    return _this


def _ignore(*_: object) -> None:
    """The Python-level handler of the signals the supervisor is woken by."""


def handle_waking_signals() -> None:
    """Set this process's handlers for a supervisor, for the life of the process.

    Python's C handler writes each signal's number to the wakeup fd (``install``), which
    wakes the select; the Python-level handlers need not do anything. SIGCHLD is left at
    its default, whatever the launcher left (ignored, the kernel would reap the replicas
    itself and their exit codes would be lost); ``watch_children`` sets its handler once
    the replicas are started, and ``close`` puts the default back.
    """
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
        signal.signal(sig, _ignore)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)


def watch_children() -> None:
    """Have SIGCHLD wake the supervisor (see ``handle_waking_signals``)."""
    signal.signal(signal.SIGCHLD, _ignore)
