"""Log lines with their times: what Kubernetes and the Docker engine prefix each line with,
read back as local times (``torchx log --timestamps``)."""

from __future__ import annotations

from datetime import datetime, timezone

from torchx.schedulers._kubernetes_status import stamped, untimestamp
from torchx.schedulers.docker_scheduler import _stamped

UTC_NOON = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
LOCAL_NOON = UTC_NOON.astimezone().replace(tzinfo=None)


def test_kubernetes_lines_keep_their_time_as_local_time() -> None:
    lines = ["2024-05-01T12:00:00.123456789Z hello\n", "2024-05-01T12:00:05Z late\n"]
    assert list(stamped(lines, None)) == [
        (LOCAL_NOON, "hello\n"),
        (LOCAL_NOON.replace(second=5, microsecond=0), "late\n"),
    ]
    # until cuts by the same times; the plain reader still drops them
    until = datetime(2024, 5, 1, 12, 0, 1, tzinfo=timezone.utc)
    assert list(stamped(lines, until)) == [(LOCAL_NOON, "hello\n")]
    assert list(untimestamp(lines, None)) == ["hello\n", "late\n"]


def test_docker_lines_keep_their_time_as_local_time() -> None:
    assert _stamped("2024-05-01T12:00:00.123456789Z hi\n") == (LOCAL_NOON, "hi\n")
    assert _stamped("no time here\n") == (None, "no time here\n")
