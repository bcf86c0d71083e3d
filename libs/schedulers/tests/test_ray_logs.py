"""Reading a Ray job's log: lines out of Ray's chunks, the driver's events, and what a
description and a followed log pull through Ray's job client from a real local cluster
(``ray_cluster``, tests/fixtures/ray.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import threading
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from itertools import islice
from typing import Any

import pytest

from torchx.schedulers._ray_direct import EVENT_PREFIX, emit
from torchx.schedulers._ray_logs import (
    _QUIET,
    _SDK_LOGGER,
    MAX_LINE_CHARS,
    QUEUED_CHUNKS,
    _split,
    followed_lines,
    log_lines,
)
from torchx.schedulers._ray_status import events, latest_state
from torchx.schedulers.ray_scheduler import RayScheduler
from torchx.specs import AppDef, AppState, Role

DEADLINE_S = 120.0


def event(**fields: Any) -> str:
    return EVENT_PREFIX + json.dumps(fields, separators=(",", ":")) + "\n"


# -- no cluster ----------------------------------------------------------------------------


def test_lines_cut_between_chunks_are_joined_and_an_endless_one_comes_in_pieces() -> None:
    chunks = iter(["a\nb", "c\n\nd", "", "e\n", "x" * (2 * MAX_LINE_CHARS + 5)])
    assert list(_split(chunks)) == [
        "a\n",
        "bc\n",
        "\n",
        "de\n",
        "x" * MAX_LINE_CHARS,
        "x" * MAX_LINE_CHARS,
        "xxxxx",
    ]


def test_latest_state_is_the_last_state_event_and_keeps_no_log_event() -> None:
    lines = [
        "Running entrypoint for job x\n",
        event(ev="state", state="PENDING"),
        event(ev="log", r="a", k=0, s="o", t=1.0, l="hi\n"),
        event(ev="state", state="RUNNING", restarts=1),
        EVENT_PREFIX + '{"ev":"state","state":"SUCC',  # cut short by a killed driver
        event(ev="log", r="a", k=0, s="o", t=2.0, l='{"ev":"state"}\n'),
    ]
    rec = latest_state(iter(lines))
    assert rec.state == {"ev": "state", "state": "RUNNING", "restarts": 1}
    assert [e["l"] for e in events(iter(lines), "log")] == ["hi\n", '{"ev":"state"}\n']


def test_an_event_must_name_its_kind_first(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="'ev'"):
        emit({"state": "RUNNING", "ev": "state"})
    emit({"ev": "state", "state": "RUNNING"})
    assert capsys.readouterr().out == event(ev="state", state="RUNNING")


class StandIn:
    """A job client whose ``tail_job_logs`` is a real async generator, as Ray's is: it
    yields ``chunks``, then (``hang``) waits as for a job that writes nothing more, then
    logs the INFO line Ray's client writes as a stream ends."""

    def __init__(self, chunks: list[str], *, hang: bool = False, fail: str = "") -> None:
        self.chunks, self.hang, self.fail = chunks, hang, fail
        self.sent = 0
        self.fetches = 0
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.closed: list[str] = []

    def get_job_logs(self, sid: str) -> str:
        self.fetches += 1
        return "".join(self.chunks)

    async def tail_job_logs(self, sid: str) -> AsyncIterator[str]:
        self.loops.append(asyncio.get_running_loop())
        sdk = logging.getLogger(_SDK_LOGGER)
        try:
            for chunk in self.chunks:
                await asyncio.sleep(0)
                self.sent += 1
                yield chunk
            if self.fail:
                raise RuntimeError(self.fail)
            if self.hang:
                await asyncio.sleep(3600)
            sdk.info("not about a stream's end")
            sdk.info(f"WebSocket closed for job {sid} with close code 1000")
            sdk.info("WebSocket closed for job someone-elses with close code 1000")
        finally:
            self.closed.append(sid)


def numbered(n: int) -> list[str]:
    return [f"line {i}\n" for i in range(n)]


def assert_closed(client: StandIn, streams: int = 1) -> None:
    """Each stream's generator ran its end, its loop is closed, its thread is gone, and
    Ray's logger is as it was."""
    assert len(client.closed) == streams
    assert len(client.loops) == streams and all(loop.is_closed() for loop in client.loops)
    assert not [t for t in threading.enumerate() if t.name.startswith("ray-log-")]
    assert _QUIET not in logging.getLogger(_SDK_LOGGER).filters


def test_a_reader_that_stops_early_closes_the_stream_which_read_ahead_only_so_far() -> None:
    client = StandIn(numbered(10 * QUEUED_CHUNKS))
    lines = followed_lines(client, "s1")
    assert list(islice(lines, 3)) == numbered(3)
    lines.close()  # type: ignore[attr-defined]
    assert_closed(client)
    # The queue is bounded: the stream waited for the reader, it did not read the log.
    assert client.sent <= QUEUED_CHUNKS + 5, client.sent


def test_a_followed_log_hides_only_the_end_of_its_own_streams(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=_SDK_LOGGER)
    client = StandIn(numbered(5))
    first, second = followed_lines(client, "s1"), followed_lines(client, "s1")
    assert next(first) == next(second) == "line 0\n"
    first.close()  # type: ignore[attr-defined]  # one replica's reader ends first
    assert list(second) == numbered(5)[1:]
    assert_closed(client, streams=2)
    said = [r.getMessage() for r in caplog.records if r.name == _SDK_LOGGER]
    assert said.count("not about a stream's end") == 2
    assert "WebSocket closed for job someone-elses with close code 1000" in said
    assert not [m for m in said if m.startswith("WebSocket closed for job s1 ")]


def test_an_interrupt_while_waiting_for_a_line_is_raised_as_it_is() -> None:
    client = StandIn(numbered(2), hang=True)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    got: list[str] = []
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as raised:
            got.extend(followed_lines(client, "s1"))
    finally:
        timer.cancel()
    assert got == numbered(2)
    assert raised.value.__context__ is None
    assert_closed(client)


def test_a_log_is_read_from_inside_a_running_event_loop() -> None:
    client = StandIn(numbered(5))

    async def inside() -> tuple[list[str], list[str]]:
        return list(islice(followed_lines(client, "s1"), 2)), list(
            log_lines(client, "s1", stream=False)
        )

    followed, fetched = asyncio.run(inside())
    assert followed == numbered(2) and fetched == numbered(5)
    assert_closed(client)


def test_a_stream_that_fails_raises_its_error_in_the_reader() -> None:
    client = StandIn(numbered(1), fail="no job s1")
    lines = followed_lines(client, "s1")
    assert next(lines) == "line 0\n"
    with pytest.raises(RuntimeError, match="no job s1"):
        next(lines)
    assert_closed(client)


def test_a_log_not_followed_is_one_fetch() -> None:
    client = StandIn(["a\nb", "c\n"])
    assert list(log_lines(client, "s1", stream=False)) == ["a\n", "bc\n"]
    assert client.fetches == 1 and client.loops == []


# -- a real cluster ------------------------------------------------------------------------


def counting_client(address: str) -> Any:
    """Ray's own job client, counting the characters of log it pulls from the cluster."""
    from ray.job_submission import JobSubmissionClient

    class Counting(JobSubmissionClient):
        pulled = 0
        tails = 0

        def get_job_logs(self, job_id: str) -> str:
            text: str = super().get_job_logs(job_id)
            self.pulled += len(text)
            return text

        async def tail_job_logs(self, job_id: str) -> AsyncIterator[str]:
            self.tails += 1
            async for chunk in super().tail_job_logs(job_id):
                self.pulled += len(chunk)
                yield chunk

    return Counting(address)


@pytest.fixture(scope="module")
def counted(ray_cluster: Any) -> Iterator[tuple[RayScheduler, Any]]:
    client = counting_client(ray_cluster.address)
    s = RayScheduler("logs", client)
    yield s, client
    s.close()


def py(name: str, code: str) -> AppDef:
    return AppDef(name, [Role(name, "", "python", ["-c", code])])


# 20,000 lines in four bursts half a second apart: a follower starts while the job runs.
BURSTS = 4
PER_BURST = 5000
BURSTY = f"""
import sys, time
for b in range({BURSTS}):
    for i in range({PER_BURST}):
        print(f"line {{b}} {{i}}")
    sys.stdout.flush()
    time.sleep(0.5)
"""


def test_a_followed_log_gives_each_line_once_and_pulls_the_log_once(
    counted: tuple[RayScheduler, Any],
) -> None:
    s, client = counted
    app_id = s.submit(py("bursty", BURSTY))
    client.pulled = 0
    lines = list(s.log_iter(app_id, "bursty", 0, should_tail=True))
    pulled = client.pulled
    assert lines == [f"line {b} {i}\n" for b in range(BURSTS) for i in range(PER_BURST)]
    desc = s.describe(app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED  # following ends with it
    whole = client.get_job_logs(s._split(app_id)[1])
    # Each character once: the old follow downloaded the whole log again at every poll.
    assert pulled == len(whole)


# About 8 MB of the replica's output, relayed as one log event a line.
BIG_LINES = 100_000
BIG = f"""
for i in range({BIG_LINES}):
    print(f"{{i:08d}} " + "x" * 60)
"""


def test_a_description_of_a_big_log_keeps_no_log_event(
    counted: tuple[RayScheduler, Any],
) -> None:
    s, client = counted
    app_id = s.submit(py("big", BIG))
    desc = s.wait(app_id, timeout=DEADLINE_S)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    size = len(client.get_job_logs(s._split(app_id)[1]))
    assert size > BIG_LINES * 69  # the log holds every line, in its event
    client.pulled = 0
    tracemalloc.start()
    try:
        desc = s.describe(app_id)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert [r.exit_code for r in desc.roles_statuses[0].replicas] == [0]
    assert client.pulled == size  # one fetch of the log
    # The fetched log and the copies Ray's client makes of it decoding its answer; the
    # driver's log events, once kept as a dict each, took several times the log.
    assert peak < 4 * size, (peak, size)


def test_a_job_torchx_did_not_submit_is_described_without_reading_its_log(
    counted: tuple[RayScheduler, Any], ray_cluster: Any
) -> None:
    s, client = counted
    sid = client.submit_job(entrypoint="echo from 0.7")
    app_id = ray_cluster.address.removeprefix("http://") + "-" + sid
    desc = s.wait(app_id, timeout=DEADLINE_S)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    client.pulled = 0
    assert s.describe(app_id) is not None
    assert client.pulled == 0
    client.tails = 0
    assert "from 0.7\n" in list(s.log_iter(app_id, "ray", 0))
    # An ended job's log, not followed, is one fetch, as 0.7 read it: the stream is slower.
    assert client.tails == 0
    assert client.pulled == len(client.get_job_logs(sid))


def test_a_follower_that_stops_early_leaves_no_stream_open(
    counted: tuple[RayScheduler, Any],
) -> None:
    s, _ = counted
    app_id = s.submit(py("early", BURSTY))
    lines = iter(s.log_iter(app_id, "early", 0, should_tail=True))
    assert list(islice(lines, 10)) == [f"line 0 {i}\n" for i in range(10)]
    lines.close()  # type: ignore[attr-defined]
    assert not [t for t in threading.enumerate() if t.name.startswith("ray-log-")]
    assert _QUIET not in logging.getLogger(_SDK_LOGGER).filters
    desc = s.wait(app_id, timeout=DEADLINE_S)
    assert desc is not None and desc.state == AppState.SUCCEEDED
