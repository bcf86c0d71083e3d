"""One replica as its supervisor keeps it: how it starts, where its output goes, its end.

Standard library only (the supervisor imports it; see ``_local_state_files``).
"""

from __future__ import annotations

import os
import time

from torchx.schedulers._local_state_files import STREAM_CODES, STREAM_FILES, TIMES_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ERROR_TAIL_LINES = 20
# Entries in .times closer together than this are merged: log times are this coarse.
TIMES_RESOLUTION = 0.005
# A partial line waits at most this long (in bytes) for its end before it goes to
# ``combined`` as it is: lines stay whole there without holding unbounded output.
PARTIAL_LINE_LIMIT = 65536
# The line written to a restarted replica's stderr and combined output before its new
# attempt starts; readers (``torchx log``) find attempts by it.
ATTEMPT_MARKER = "[torchx] attempt {attempt} of {role}/{id} starts: {why}\n"


class Replica:
    """One replica: how to start it, where its output goes, and what happened to it."""

    def __init__(self, spec: dict[str, Any], app_dir: str) -> None:
        self.role: str = spec["role"]
        self.id: int = spec["id"]
        self.argv: list[str] = spec["argv"]
        self.env: dict[str, str] = spec["env"]
        self.cwd: str = spec["cwd"]
        self.dir = os.path.join(app_dir, self.role, str(self.id))
        self.pid: int | None = None
        self.start_token: str | None = None
        self.token_read = False  # start_token is read lazily, once per attempt
        self.pipes: dict[int, str] = {}
        self.state = "PENDING"
        self.exit_code: int | None = None
        self.error = ""
        self.killed = False  # ended because the supervisor stopped it
        self.files: dict[str, int] = {}
        self.offsets: dict[str, int] = {}
        self.last_time: dict[str, float] = {}
        self.attempt = 0  # 1 for the first start, +1 on each restart
        self.attempt_start = 0  # where this attempt's stderr starts
        # The unfinished last line of each stream, not yet in ``combined``.
        self.partial: dict[str, bytes] = {"stdout": b"", "stderr": b""}

    def open_logs(self) -> None:
        if self.files:
            return
        os.makedirs(self.dir, exist_ok=True)
        for name in (*STREAM_CODES, TIMES_FILE):
            path = os.path.join(self.dir, STREAM_FILES.get(name, name))
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            self.files[name] = fd
            self.offsets[name] = os.fstat(fd).st_size

    def record(self, stream: str, data: bytes) -> None:
        """Append a chunk of output to its stream file and to ``combined``.

        The files are created on the first output, which keeps file system work out of
        the way while replicas are being started.
        """
        self.open_logs()
        now = time.time()
        self._append(stream, data, now)
        # ``combined`` gets whole lines only, so a partial stderr line is never glued to
        # the next stdout line.
        whole = self.partial[stream] + data
        cut = whole.rfind(b"\n") + 1
        if len(whole) - cut > PARTIAL_LINE_LIMIT:
            cut = len(whole)
        self.partial[stream] = whole[cut:]
        if cut:
            self._append("combined", whole[:cut], now)

    def flush_partial(self, stream: str, end_line: bool = False) -> None:
        """Put the unfinished last line of ``stream`` into ``combined`` (its pipe closed)."""
        rest = self.partial.get(stream, b"")
        if rest:
            self.partial[stream] = b""
            self._append("combined", rest + (b"\n" if end_line else b""), time.time())

    def mark_attempt(self, why: str) -> None:
        """Start the log of a new attempt with a marker line, on a line of its own."""
        if self.partial["stderr"]:  # the stderr file, too, gets the marker on its own line
            self._append("stderr", b"\n", time.time())
        for stream in ("stdout", "stderr"):
            self.flush_partial(stream, end_line=True)
        line = ATTEMPT_MARKER.format(attempt=self.attempt, role=self.role, id=self.id, why=why)
        self.record("stderr", line.encode())
        # the error of this attempt is read from here on
        self.attempt_start = self.offsets["stderr"]

    def _append(self, name: str, data: bytes, now: float) -> None:
        # The time entry goes first so a reader never sees bytes without their time.
        if now - self.last_time.get(name, 0.0) >= TIMES_RESOLUTION:
            entry = f"{STREAM_CODES[name]} {self.offsets[name]} {now:.6f}\n".encode()
            self._write(TIMES_FILE, entry)
            self.last_time[name] = now
        self._write(name, data)
        self.offsets[name] += len(data)

    def _write(self, name: str, data: bytes) -> None:
        try:
            if os.write(self.files[name], data) == len(data):
                return
            # a short write: the file system is full or the file hit its size limit
            raise OSError(27, "File too large or disk full (short write)")
        except OSError as e:
            path = os.path.join(self.dir, STREAM_FILES.get(name, name))
            raise OSError(e.errno, e.strerror, path) from None

    def stderr_tail(self, n: int = ERROR_TAIL_LINES) -> str:
        try:
            with open(os.path.join(self.dir, STREAM_FILES["stderr"]), "rb") as f:
                f.seek(max(self.attempt_start, self.offsets.get("stderr", 0) - 16384))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-n:])

    def set_final_state(self) -> None:
        """Judge an ended attempt on its own: stopped by the supervisor is CANCELLED, exit
        0 SUCCEEDED, anything else FAILED with the last lines of its stderr. (A restart or
        a requeue is the supervisor's decision, made before or after this.)"""
        if self.killed:
            self.state = "CANCELLED"
        elif self.exit_code == 0:
            self.state = "SUCCEEDED"
        else:
            self.state, self.error = "FAILED", self.stderr_tail()

    def close_logs(self) -> None:
        for fd in self.files.values():
            os.close(fd)
        self.files.clear()
