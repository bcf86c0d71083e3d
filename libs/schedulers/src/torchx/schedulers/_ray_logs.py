"""A Ray job's log, read as a stream of lines through Ray's job client.

``JobSubmissionClient.tail_job_logs`` sends the log from its first line in chunks, then
what is written next, and ends once the job has ended and its last line was sent: following
a log reads each line once, however long the job runs. ``get_job_logs`` answers with the
whole log as one string, several times faster than the stream: what a running job's log
holds now (the stream would wait for the job's end), and what a description reads.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

# A line longer than this (output without a newline, from a job torchx did not submit) is
# given in pieces of this size, so that no line held back for its end grows with the log.
MAX_LINE_CHARS = 1024 * 1024
# The logger of Ray's job client (``ray.job_submission``'s implementation).
_SDK_LOGGER = "ray.dashboard.modules.job.sdk"


def _quiet_info(record: logging.LogRecord) -> bool:
    return record.levelno > logging.INFO


def _split(chunks: Iterator[str]) -> Iterator[str]:
    """``chunks`` of a log as its lines, each with its ``\\n`` (the last one may have none).

    Ray cuts chunks at line ends, except inside a line longer than its chunk size.
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


def _streamed(client: Any, sid: str) -> Iterator[str]:
    """The chunks ``tail_job_logs`` yields, from this thread (it is a coroutine API)."""
    chunks = client.tail_job_logs(sid)
    loop = asyncio.new_event_loop()
    # Ray's client logs each stream's end at INFO on stderr, into the output of `torchx log`.
    sdk_logger = logging.getLogger(_SDK_LOGGER)
    sdk_logger.addFilter(_quiet_info)
    try:
        while True:
            try:
                yield loop.run_until_complete(chunks.__anext__())
            except StopAsyncIteration:
                return
    finally:
        # Closes the websocket when a reader stops early (a `head`, a found state).
        loop.run_until_complete(chunks.aclose())
        loop.close()
        sdk_logger.removeFilter(_quiet_info)


def followed_lines(client: Any, sid: str) -> Iterator[str]:
    """The job's log line by line, from its start until the job has ended.

    Ray's log server holds the stream of a job still waiting for Ray to start it until it
    starts (or is stopped): read it so only to follow the job.
    """
    return _split(_streamed(client, sid))


def log_lines(client: Any, sid: str, *, stream: bool) -> Iterator[str]:
    """The job's log line by line: streamed (``followed_lines``) when ``stream``, else what
    it holds now, fetched in one answer (several times faster than the stream, which Ray
    sends ten lines a message, but held whole while it is read)."""
    if stream:
        return followed_lines(client, sid)
    text: str = client.get_job_logs(sid)
    return _split(iter((text,)))


__all__ = ["MAX_LINE_CHARS", "followed_lines", "log_lines"]
