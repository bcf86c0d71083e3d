"""Reading a Ray job's log: lines out of Ray's chunks, the driver's events, and what a
description and a followed log pull through Ray's job client from a real local cluster
(``ray_cluster``, tests/fixtures/ray.py)."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from torchx.schedulers._ray_direct import EVENT_PREFIX, emit
from torchx.schedulers._ray_logs import MAX_LINE_CHARS, _split
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
    assert rec.logs == []
    assert [e["l"] for e in events(iter(lines), "log")] == ["hi\n", '{"ev":"state"}\n']


def test_an_event_must_name_its_kind_first(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="'ev'"):
        emit({"state": "RUNNING", "ev": "state"})
    emit({"ev": "state", "state": "RUNNING"})
    assert capsys.readouterr().out == event(ev="state", state="RUNNING")


# -- a real cluster ------------------------------------------------------------------------


def counting_client(address: str) -> Any:
    """Ray's own job client, counting the characters of log it pulls from the cluster."""
    from ray.job_submission import JobSubmissionClient

    class Counting(JobSubmissionClient):
        pulled = 0

        def get_job_logs(self, job_id: str) -> str:
            text: str = super().get_job_logs(job_id)
            self.pulled += len(text)
            return text

        async def tail_job_logs(self, job_id: str) -> AsyncIterator[str]:
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
    assert "from 0.7\n" in list(s.log_iter(app_id, "ray", 0))
