"""Lines of a file that may still grow, read a bounded chunk at a time."""

from __future__ import annotations

import os
from collections.abc import Iterator

CHUNK_BYTES = 64 * 1024
# A "line" longer than this (a log without newlines) is given out in pieces of this size,
# so that memory stays bounded whatever the file holds.
MAX_LINE_BYTES = 1024 * 1024


class FileLines:
    """Reads ``path`` from where the last read stopped; a missing file reads as empty.

    ``new_lines`` gives the complete lines written since the last call; ``rest`` gives the
    unfinished last line once the writer is done.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self._pos = 0
        self._pending = b""

    def new_lines(self) -> Iterator[str]:
        try:
            f = open(self.path, "rb")  # noqa: SIM115 -- closed below, between yields too
        except FileNotFoundError:
            return
        with f:
            f.seek(self._pos)
            while chunk := f.read(CHUNK_BYTES):
                self._pos += len(chunk)
                *done, self._pending = (self._pending + chunk).split(b"\n")
                for line in done:
                    yield line.decode("utf-8", "replace") + "\n"
                while len(self._pending) >= MAX_LINE_BYTES:
                    piece = self._pending[:MAX_LINE_BYTES]
                    self._pending = self._pending[MAX_LINE_BYTES:]
                    yield piece.decode("utf-8", "replace")

    def rest(self) -> Iterator[str]:
        if self._pending:
            yield self._pending.decode("utf-8", "replace")
            self._pending = b""


__all__ = ["FileLines"]
