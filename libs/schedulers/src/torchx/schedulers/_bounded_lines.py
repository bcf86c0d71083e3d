"""Lines of a growing file, read with a bounded buffer whatever the file holds.

A log may be gigabytes without a newline; reading "the rest of the file" at once would
hold all of it. Here the file is read ``READ_CHUNK_BYTES`` at a time and a line longer
than ``MAX_LINE_BYTES`` is cut into pieces of at most that size (at a UTF-8 character
boundary), each given as a line of its own. Memory stays under about twice the cap,
whatever the size of the file or of its lines.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

__all__ = [
    "MAX_LINE_BYTES",
    "READ_CHUNK_BYTES",
    "FileLines",
    "LineSplitter",
    "bounded_lines",
    "decoded_lines",
]

# The longest line given whole; longer ones come in pieces of this size.
MAX_LINE_BYTES = 1 << 20
READ_CHUNK_BYTES = 1 << 16
# How often a follower looks for new bytes once it has read everything.
FOLLOW_INTERVAL_S = 0.05


def _cut_at(data: bytes | bytearray, limit: int) -> int:
    """Where to cut ``data`` at or before ``limit`` without splitting a UTF-8 character."""
    cut = limit
    # step back over continuation bytes (0b10xxxxxx), at most three of them
    while cut > limit - 3 and cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut if cut > 0 else limit


class LineSplitter:
    """Turns chunks of bytes into lines, holding at most ``max_line`` bytes of a line.

    ``feed`` gives each complete line (with its ``\\n``) and each piece of an over-long
    line (without one) as ``(offset, bytes)``, ``offset`` being where it starts in the
    stream; ``flush`` gives what is left at the end.
    """

    def __init__(self, max_line: int = MAX_LINE_BYTES, offset: int = 0) -> None:
        if max_line < 4:
            raise ValueError(f"max_line: got {max_line}; give at least 4 bytes")
        self.max_line = max_line
        self.pending = bytearray()
        self.offset = offset  # where ``pending`` starts in the stream

    def feed(self, data: bytes) -> Iterator[tuple[int, bytes]]:
        start = 0
        while (nl := data.find(b"\n", start)) >= 0:
            if not self.pending and nl - start <= self.max_line:
                line = data[start : nl + 1]  # the common case: no copy but the slice
            else:
                yield from self._pieces(data[start:nl])
                line = bytes(self.pending) + b"\n"
                self.pending.clear()
            yield self.offset, line
            self.offset += len(line)
            start = nl + 1
        yield from self._pieces(data[start:])

    def _pieces(self, rest: bytes) -> Iterator[tuple[int, bytes]]:
        """Add ``rest`` (no newline in it) to the pending line, giving out full pieces."""
        self.pending += rest
        while len(self.pending) > self.max_line:
            cut = _cut_at(self.pending, self.max_line)
            piece = bytes(self.pending[:cut])
            del self.pending[:cut]
            yield self.offset, piece
            self.offset += cut

    def flush(self) -> Iterator[tuple[int, bytes]]:
        if self.pending:
            piece = bytes(self.pending)
            self.pending.clear()
            yield self.offset, piece
            self.offset += len(piece)


def bounded_lines(
    f: BinaryIO,
    *,
    ended: Callable[[], bool] | None = None,
    max_line: int = MAX_LINE_BYTES,
    chunk_bytes: int = READ_CHUNK_BYTES,
) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for each line of ``f`` from where it stands, as ``LineSplitter``.

    Without ``ended`` it stops at the end of the file. With it, it follows the file: at
    the end it asks ``ended()`` and, while that is False, waits for more; once True, it
    reads what came meanwhile and stops. ``ended`` is asked before that last read, so no
    byte written before the end is missed.
    """
    splitter = LineSplitter(max_line, f.tell())
    while True:
        done = ended is None or ended()
        while chunk := f.read(chunk_bytes):
            yield from splitter.feed(chunk)
        if done:
            yield from splitter.flush()
            return
        time.sleep(FOLLOW_INTERVAL_S)


def decoded_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines of a stream that arrives in chunks of bytes (a line may span several), as
    ``LineSplitter`` cuts them, decoded as UTF-8 with bad bytes replaced."""
    splitter = LineSplitter()
    for chunk in chunks:
        for _, line in splitter.feed(chunk):
            yield line.decode("utf-8", "replace")
    for _, piece in splitter.flush():
        yield piece.decode("utf-8", "replace")


class FileLines:
    """Lines of ``path`` read from where the last read stopped, for a caller that polls the
    file between other work (``bounded_lines`` follows it itself); a missing file reads
    as empty.

    ``new_lines`` gives the lines written since the last call, as ``LineSplitter``;
    ``rest`` gives the unfinished last line once the writer is done.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self._pos = 0
        self._splitter = LineSplitter()

    def new_lines(self) -> Iterator[str]:
        try:
            f = open(self.path, "rb")  # noqa: SIM115 -- closed below, between yields too
        except FileNotFoundError:
            return
        with f:
            f.seek(self._pos)
            while chunk := f.read(READ_CHUNK_BYTES):
                self._pos += len(chunk)
                for _, line in self._splitter.feed(chunk):
                    yield line.decode("utf-8", "replace")

    def rest(self) -> Iterator[str]:
        for _, piece in self._splitter.flush():
            yield piece.decode("utf-8", "replace")
