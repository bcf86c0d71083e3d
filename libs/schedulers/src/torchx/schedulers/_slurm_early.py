"""``sbatch`` started before its script exists, so that its own start-up (loading its
libraries, reading ``slurm.conf``, its plug-ins) runs while the caller still builds the
script; about half of an ``sbatch`` call on a small cluster comes before it reads its
script.

What makes this safe: sbatch reads the script from its stdin to the end before it asks
the controller for anything, so until its stdin is closed nothing has been submitted, and
killing it then submits nothing. The script is written with ONE ``write`` into a pipe made
large enough to take it whole, so sbatch sees either nothing (an empty script, which it
refuses) or all of it, even if this process dies while writing.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from torchx.schedulers._slurm_commands import TIMEOUT

# Linux's default pipe capacity, where the pipe cannot say its own.
_DEFAULT_PIPE = 65536
# The overlap needs a CPU for sbatch beside the caller's (and the Slurm daemons', where
# they share the machine): on two CPUs under load, the two only take turns, and starting
# sbatch early measured slower (by 0.4-0.9 ms of a 15-20 ms sweep submit).
MIN_CPUS = 3


def worth_starting_early() -> bool:
    """Whether this process may use enough CPUs for sbatch's start-up to overlap its work."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return cpus >= MIN_CPUS


class EarlySbatch:
    """One ``sbatch`` started with ``cmd`` and waiting for its script on stdin."""

    def __init__(self, cmd: list[str]) -> None:
        self.cmd = cmd
        self.proc: subprocess.Popen[bytes] | None = None
        # no sbatch here: the ordinary call says so, once the request is built
        with suppress(OSError):
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )

    def submit(self, script: str) -> subprocess.CompletedProcess[str] | None:
        """Give sbatch ``script`` and wait for its answer; None (sbatch ended unused) when
        the script cannot be written whole at once: then run sbatch the ordinary way."""
        proc, self.proc = self.proc, None
        if proc is None or proc.stdin is None:
            return None
        data = script.encode()
        if not _room_for(proc.stdin.fileno(), len(data)):
            _end(proc)
            return None
        try:
            written = os.write(proc.stdin.fileno(), data) if data else 0
        except BrokenPipeError:
            written = len(data)  # sbatch ended before reading (a bad option): it says why
        except BaseException:
            _end(proc)
            raise
        if written != len(data):  # cannot happen with room for all of it; never submit a part
            _end(proc)
            return None
        try:
            # closes sbatch's stdin first: from here on, it submits
            out, err = proc.communicate(timeout=TIMEOUT)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        return subprocess.CompletedProcess(
            self.cmd, proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")
        )

    def cancel(self) -> None:
        """End an sbatch that never got its script (it has submitted nothing)."""
        proc, self.proc = self.proc, None
        if proc is not None:
            _end(proc)


def _room_for(fd: int, size: int) -> bool:
    """Whether one write of ``size`` bytes into pipe ``fd`` cannot block (and so cannot be
    cut short), making the pipe larger where needed and allowed."""
    try:
        import fcntl

        capacity = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
        if capacity < size:
            capacity = fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
    except (ImportError, AttributeError, OSError):
        capacity = _DEFAULT_PIPE
    return size <= capacity


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` while its stdin is still open, so it never reads an end of script."""
    proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


class EarlySlot:
    """The ``sbatch`` started early for this thread's next submission, if any."""

    def __init__(self) -> None:
        self._local = threading.local()

    def take(self, cmd: list[str]) -> EarlySbatch | None:
        """The early sbatch if it was started with ``cmd`` (it is then this caller's)."""
        early: EarlySbatch | None = getattr(self._local, "early", None)
        if early is None or early.cmd != cmd:
            return None
        self._local.early = None
        return early

    @contextmanager
    def started(self, cmd: list[str]) -> Iterator[None]:
        """``sbatch`` started now with ``cmd``, for the next ``take`` in this thread while
        the block runs; killed unused when the block ends without one (an error, Ctrl-C)."""
        early = EarlySbatch(cmd)
        previous = getattr(self._local, "early", None)
        self._local.early = early
        try:
            yield
        finally:
            self._local.early = previous
            early.cancel()


# One per process: what a thread started early is for that thread's next sbatch with
# the same command line, whichever SlurmScheduler runs it.
EARLY = EarlySlot()
