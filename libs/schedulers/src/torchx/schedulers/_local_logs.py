"""Reading a local replica's log files, with the time each line arrived."""

from __future__ import annotations

import os
import time
from bisect import bisect_right
from collections.abc import Callable, Iterator

from torchx.schedulers._api import Stream
from torchx.schedulers._local_state_files import STREAM_CODES, TIMES_FILE

# How often a tailing reader looks for new output once it has read everything.
TAIL_INTERVAL = 0.05


def timed_lines(
    replica_dir: str, stream: Stream, ended: Callable[[], bool] | None
) -> Iterator[tuple[float, str]]:
    """(arrival time, line) of one stream of a replica; with ``ended``, follows the file
    until ``ended()`` says the app is over."""
    path = os.path.join(replica_dir, stream.value)
    times_path = os.path.join(replica_dir, TIMES_FILE)
    code = STREAM_CODES[stream.value]
    offsets: list[int] = []
    stamps: list[float] = []
    times_pos = 0
    pos = 0
    pending = b""
    f = None
    try:
        while True:
            done = ended is None or ended()
            if f is None and os.path.exists(path):
                f = open(path, "rb")  # noqa: SIM115 -- kept open across the tail loop
            chunk = f.read() if f is not None else b""
            if chunk:
                times_pos = _read_times(times_path, times_pos, code, offsets, stamps)
                data = pending + chunk
                start = pos - len(pending)
                parts = data.split(b"\n")
                pending = parts.pop()
                for part in parts:
                    i = bisect_right(offsets, start) - 1
                    t = stamps[i] if i >= 0 else 0.0
                    yield t, part.decode("utf-8", "replace") + "\n"
                    start += len(part) + 1
                pos += len(chunk)
                continue
            if done:
                if pending:
                    times_pos = _read_times(times_path, times_pos, code, offsets, stamps)
                    i = bisect_right(offsets, pos - len(pending)) - 1
                    yield (stamps[i] if i >= 0 else 0.0), pending.decode("utf-8", "replace")
                return
            time.sleep(TAIL_INTERVAL)
    finally:
        if f is not None:
            f.close()


def _read_times(path: str, start: int, code: str, offsets: list[int], stamps: list[float]) -> int:
    """Append the (offset, time) entries of ``code`` found after byte ``start`` of .times."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read()
    except FileNotFoundError:
        return start
    end = data.rfind(b"\n") + 1
    for line in data[:end].decode().splitlines():
        c, off, t = line.split()
        if c == code:
            offsets.append(int(off))
            stamps.append(float(t))
    return start + end
