"""A Ray job's log, read line by line through Ray's job client.

``get_job_logs`` answers with the whole log as one string: what a job's log holds now,
several times faster than the stream (Ray sends it ten lines a message), as 0.7 read it.
``JobSubmissionClient.tail_job_logs`` sends the log from its first line in chunks, then
what is written next, and ends once the job has ended and its last line was sent: following
a log reads each line once, however long the job runs.

``tail_job_logs`` is a coroutine API. It runs on a thread of its own, with an event loop of
its own, so that the reader's thread may be one that already runs a loop (a notebook, an
async app); the chunks come over through a bounded queue, so a slow reader holds at most
``QUEUED_CHUNKS`` of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections import Counter
from collections.abc import AsyncGenerator, Iterator
from typing import Any

# A line longer than this (output without a newline, from a job torchx did not submit) is
# given in pieces of this size, so that no line held back for its end grows with the log.
MAX_LINE_CHARS = 1024 * 1024
# Chunks read ahead of the reader (Ray's are about ten lines each).
QUEUED_CHUNKS = 64
# How long a stopped reader waits for the stream's thread to close its connection; the
# thread is a daemon, so one stuck on a dead network keeps no process alive.
CLOSE_WAIT_S = 30.0
# The logger of Ray's job client (``ray.job_submission``'s implementation).
_SDK_LOGGER = "ray.dashboard.modules.job.sdk"
_CLOSED = "WebSocket closed for job "


class _QuietStreamEnds(logging.Filter):
    """Drops the INFO record Ray's client writes at the end of each stream torchx reads
    (it lands in the output of `torchx log`), and nothing else.

    One instance is on Ray's logger while any stream is read; it names the jobs whose
    streams are open, once per stream (two replicas' logs are the same job's stream)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        message = record.getMessage()
        if not message.startswith(_CLOSED):
            return True
        sid = message[len(_CLOSED) :].split(" ", 1)[0]
        with self._lock:
            return sid not in self._open

    def opened(self, sid: str) -> None:
        with self._lock:
            if not self._open:
                logging.getLogger(_SDK_LOGGER).addFilter(self)
            self._open[sid] += 1

    def closed(self, sid: str) -> None:
        with self._lock:
            self._open[sid] -= 1
            if self._open[sid] <= 0:
                del self._open[sid]
            if not self._open:
                logging.getLogger(_SDK_LOGGER).removeFilter(self)


_QUIET = _QuietStreamEnds()


def _split(chunks: Iterator[str]) -> Iterator[str]:
    """``chunks`` of a log as its lines, each with its ``\\n`` (the last one may have none).

    Ray cuts chunks at line ends, except inside a line longer than its chunk size, so a
    line is joined across chunks here (``split_lines_iterator`` takes each piece as whole
    lines); and only ``\\n`` ends a line, as in 0.7, so a progress bar's ``\\r`` stays in
    its line.
    """
    rest = ""
    for chunk in chunks:
        text, start = rest + chunk, 0
        while (end := text.find("\n", start)) != -1:
            yield text[start : end + 1]
            start = end + 1
        rest = text[start:]
        while len(rest) > MAX_LINE_CHARS:
            yield rest[:MAX_LINE_CHARS]
            rest = rest[MAX_LINE_CHARS:]
    if rest:
        yield rest


class _End:
    """What the stream's thread hands over last: how the stream ended."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


async def _relay(
    chunks: AsyncGenerator[str, None], out: queue.Queue[Any], stop: threading.Event
) -> None:
    try:
        async for chunk in chunks:
            if stop.is_set():
                return
            # Blocks this loop while the queue is full: the stream waits for the reader.
            # A reader that stops empties the queue, so this returns.
            out.put(chunk)
    finally:
        # Closes the websocket (Ray's ``async with`` session) when the reader stopped
        # early; a no-op on a stream that ended or was cancelled.
        await chunks.aclose()


def _pump(
    client: Any,
    sid: str,
    loop: asyncio.AbstractEventLoop,
    out: queue.Queue[Any],
    stop: threading.Event,
) -> None:
    """The stream's thread: ``tail_job_logs`` on ``loop`` until it ends or ``stop``."""
    end = _End()
    _QUIET.opened(sid)
    try:
        try:
            try:
                loop.run_until_complete(_relay(client.tail_job_logs(sid), out, stop))
            finally:
                try:
                    loop.run_until_complete(loop.shutdown_asyncgens())
                    # aiohttp resolves names on the loop's default executor (threads).
                    loop.run_until_complete(loop.shutdown_default_executor())
                finally:
                    loop.close()
        finally:
            _QUIET.closed(sid)
    except asyncio.CancelledError:
        pass  # the reader stopped
    except BaseException as e:  # handed to the reader, raised there
        end = _End(e)
    if not stop.is_set():
        out.put(end)


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    for task in asyncio.all_tasks(loop):
        task.cancel()


def _streamed(client: Any, sid: str) -> Iterator[str]:
    """The chunks ``tail_job_logs`` yields, read on the stream's own thread and loop."""
    out: queue.Queue[Any] = queue.Queue(maxsize=QUEUED_CHUNKS)
    stop = threading.Event()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(
        target=_pump, args=(client, sid, loop, out, stop), name=f"ray-log-{sid}", daemon=True
    )
    thread.start()
    try:
        while not isinstance(item := out.get(), _End):
            yield item
        if item.error is not None:
            raise item.error
    finally:
        # The reader stopped (a `head`, a found line, an interrupt) or the stream ended.
        stop.set()
        # A closed loop (RuntimeError) is a stream that ended: nothing to cancel.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_cancel_all, loop)
        # Unblocks a thread waiting for room in the queue; after `stop` it puts no more.
        with contextlib.suppress(queue.Empty):
            while True:
                out.get_nowait()
        thread.join(CLOSE_WAIT_S)


def followed_lines(client: Any, sid: str) -> Iterator[str]:
    """The job's log line by line, from its start until the job has ended.

    Ray's log server holds the stream of a job still waiting for Ray to start it until it
    starts (or is stopped): read it so only to follow the job.
    """
    return _split(_streamed(client, sid))


def log_lines(client: Any, sid: str, *, stream: bool) -> Iterator[str]:
    """The job's log line by line: followed (``followed_lines``) when ``stream``, else what
    it holds now, fetched in one answer (as 0.7 read it, and held whole while it is read)."""
    if stream:
        return followed_lines(client, sid)
    text: str = client.get_job_logs(sid)
    return _split(iter((text,)))


__all__ = ["CLOSE_WAIT_S", "MAX_LINE_CHARS", "QUEUED_CHUNKS", "followed_lines", "log_lines"]
