"""Reading a local replica's log files, with the time each line arrived.

Memory stays bounded whatever the logs hold: the stream is read through
``bounded_lines`` (lines over ``MAX_LINE_BYTES`` come in pieces) and its ``.times`` file
one entry at a time, as the lines reach each entry's offset.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import BinaryIO

from torchx.schedulers._api import Stream
from torchx.schedulers._bounded_lines import FOLLOW_INTERVAL_S, bounded_lines
from torchx.schedulers._local_state_files import STREAM_CODES, STREAM_FILES, TIMES_FILE

# A .times entry is "<code> <offset> <seconds>"; anything longer is not one.
_MAX_TIMES_ENTRY = 96


class ArrivalTimes:
    """When each byte of one stream arrived, read from ``.times`` as far as needed.

    ``at(offset)`` must be asked with offsets that never decrease; it gives the time of
    the last entry at or before ``offset`` (0.0 before the first).
    """

    def __init__(self, path: str, code: str) -> None:
        self.path = path
        self.code = code.encode()
        self.f: BinaryIO | None = None
        self.current = 0.0
        self.next: tuple[int, float] | None = None

    def at(self, offset: int) -> float:
        while True:
            if self.next is None:
                self.next = self._read_entry()
                if self.next is None:
                    return self.current
            if self.next[0] > offset:
                return self.current
            self.current = self.next[1]
            self.next = None

    def _read_entry(self) -> tuple[int, float] | None:
        if self.f is None:
            try:
                self.f = open(self.path, "rb")  # noqa: SIM115 -- read on as the log grows
            except FileNotFoundError:
                return None
        while True:
            start = self.f.tell()
            line = self.f.readline(_MAX_TIMES_ENTRY)
            if not line.endswith(b"\n"):
                if len(line) < _MAX_TIMES_ENTRY:
                    self.f.seek(start)  # being written: read it whole next time
                    return None
                continue  # not an entry (a write cut short): skip to the next newline
            fields = line.split()
            if len(fields) != 3 or fields[0] != self.code:
                continue
            try:
                return int(fields[1]), float(fields[2])
            except ValueError:
                continue

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            self.f = None


def stream_path(replica_dir: str, stream: Stream) -> str:
    """The file of ``stream``; apps started by an older torchx named it without ``.log``."""
    path = os.path.join(replica_dir, STREAM_FILES[stream.value])
    old = os.path.join(replica_dir, stream.value)
    return old if not os.path.exists(path) and os.path.exists(old) else path


def timed_lines(
    replica_dir: str, stream: Stream, ended: Callable[[], bool] | None
) -> Iterator[tuple[float, str]]:
    """(arrival time, line) of one stream of a replica; with ``ended``, follows the file
    until ``ended()`` says the app is over."""
    path = stream_path(replica_dir, stream)
    while not os.path.exists(path):  # a replica's files appear with its first output
        if ended is None or ended():
            if not os.path.exists(path):
                return
            break
        time.sleep(FOLLOW_INTERVAL_S)
    times = ArrivalTimes(os.path.join(replica_dir, TIMES_FILE), STREAM_CODES[stream.value])
    try:
        with open(path, "rb") as f:
            for offset, line in bounded_lines(f, ended=ended):
                yield times.at(offset), line.decode("utf-8", "replace")
    finally:
        times.close()
