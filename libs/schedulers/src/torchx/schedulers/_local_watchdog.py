"""The watchdog that stops an app's replicas should its supervisor die.

Standard library only (the supervisor imports it; see ``_local_state_files``).
"""

from __future__ import annotations

import os
import signal
import time

from torchx.schedulers._local_processes import kill_recorded_groups, process_parent_and_start
from torchx.schedulers._local_state_files import (
    STATE_FILE,
    StateFileError,
    read_data,
    record_orphaned_end,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# What the supervisor tells its watchdog (see ``Watchdog``), one line each.
GUARD_DONE = b"done\n"
# The start token recorded for a replica that had stopped running when the watchdog
# looked: a process found later under its pid is not it (its group is still killed
# while nothing else holds the number).
ENDED = "ended"
# How long the watchdog lets lines gather in its pipe between two reads; also the most its
# reaction to the supervisor's death is delayed by.
READ_PAUSE_S = 0.02


class Watchdog:
    """A forked child of the supervisor that outlives it only to stop its replicas.

    It reads one line per replica group from a pipe. The pipe closes when the supervisor
    exits, whatever the cause; a close without ``done`` first means the supervisor died
    (``kill -9``, a crash): every group is then killed and the app recorded as FAILED.

    It runs in a process group of its own (set by the supervisor and by itself, so that
    none can signal the supervisor's group while it is still there): ``kill -9 -PGID``
    of the supervisor's group, which would otherwise take both at once, leaves it to do
    its job.
    """

    def __init__(self, fd: int, meta: str, supervisor: int) -> None:
        self.fd = fd
        self.meta = meta
        self.supervisor = supervisor
        self.groups: list[dict[str, Any]] = []
        self.pending = b""  # the start of a line not yet whole

    def feed(self, data: bytes) -> bool:
        """Take what the supervisor wrote to the pipe; whether it said ``done``."""
        self.pending += data
        *lines, self.pending = self.pending.split(b"\n")
        for line in lines:
            if line == GUARD_DONE.strip():
                return True
            self.told(int(line[1:]))
        return False

    def told(self, pid: int) -> None:
        """Keep the group of replica ``pid``, just started, with its start token."""
        self.groups.append({"pgid": pid, "start": self.start_of(pid)})

    def supervisor_alive(self) -> bool:
        """Whether the supervisor still runs: this process, its child, is not adopted yet."""
        return os.getppid() == self.supervisor

    def run(self) -> None:
        # Only the supervisor's end (the pipe's close) matters; a stray signal does not.
        for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        try:  # noqa: SIM105 -- no contextlib here (see the module docstring)
            os.setpgid(0, 0)
        except OSError:
            pass  # the supervisor did it first
        if os.getppid() != self.supervisor:
            return self.stop_all()
        while True:
            data = os.read(self.fd, 65536)  # Python retries it after a signal (PEP 475)
            if not data:
                break
            if self.feed(data):
                return None
            # Reading in batches: a reader blocked on the pipe would be woken (and the
            # supervisor slowed) by each replica's line while hundreds start.
            time.sleep(READ_PAUSE_S)
        return self.stop_all()

    def start_of(self, pid: int) -> str:
        """The start token of replica ``pid``, read here rather than by the supervisor while
        it starts replicas. A process under that pid whose parent is not the supervisor
        is another one, while the supervisor lives (the replica ended and was reaped);
        once it died, its replicas have a new parent."""
        found = process_parent_and_start(pid)
        if found is None:
            return ENDED
        parent, token = found
        if token is None or (parent != self.supervisor and self.supervisor_alive()):
            return ENDED
        return token

    def stop_all(self) -> None:
        killed = kill_recorded_groups({"replicas": self.groups})
        path = os.path.join(self.meta, STATE_FILE)
        try:
            state = read_data(path) or {}
        except StateFileError:
            state = {}
        if state.get("state") not in (None, "PENDING", "RUNNING"):
            return  # the supervisor recorded its own end (an emergency stop)
        record_orphaned_end(
            self.meta,
            state,
            self.supervisor,
            f"; its watchdog killed the replica process groups {killed}",
        )
