"""Engine and API-server times become this machine's local time without a zone, the form
every scheduler's ``list`` gives, so apps of any scheduler sort and filter together."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from torchx.schedulers._rfc3339 import local_time, parse_local, parse_utc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01T10:20:30.123456789Z", datetime(2024, 5, 1, 10, 20, 30, 123456, timezone.utc)),
        ("2024-05-01T10:20:30Z", datetime(2024, 5, 1, 10, 20, 30, tzinfo=timezone.utc)),
        ("2024-05-01T10:20:30", datetime(2024, 5, 1, 10, 20, 30, tzinfo=timezone.utc)),
        (
            "2024-05-01T12:20:30.5+02:00",
            datetime(2024, 5, 1, 10, 20, 30, 500000, timezone.utc),
        ),
    ],
)
def test_rfc3339_forms_parse_to_the_same_instant(text: str, expected: datetime) -> None:
    assert parse_utc(text) == expected


@pytest.mark.parametrize("text", ["", None, "nonsense", "2024-13-01T00:00:00Z"])
def test_what_is_not_a_time_is_none(text: str | None) -> None:
    assert parse_utc(text) is None and parse_local(text) is None


@pytest.fixture(params=["UTC0", "IST-5:30", "America/New_York"])
def zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The test under this machine's zone set to UTC, to one 5.5 hours east of it, then to
    one west of it."""
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


def test_local_form_is_naive_and_the_same_instant(zone: str) -> None:
    now = datetime.now().replace(microsecond=0)
    stamp = now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000000000Z")
    got = parse_local(stamp)
    assert got == now and got.tzinfo is None
    # the local form compares with the times local schedulers record
    assert abs(got - datetime.fromtimestamp(now.timestamp())) < timedelta(seconds=1)
    assert local_time(now) is now
    if zone.startswith("IST"):
        assert parse_local("2024-05-01T10:20:30Z") == datetime(2024, 5, 1, 15, 50, 30)


def test_the_engine_zero_time_is_no_time_in_any_zone(zone: str) -> None:
    # Go's zero time: the container engine's FinishedAt of a running container. West of
    # UTC its local form would be in year 0, which Python cannot hold.
    assert parse_utc("0001-01-01T00:00:00Z") is None
    assert parse_local("0001-01-01T00:00:00Z") is None
    assert parse_local("0001-01-01T00:00:00.000000000Z") is None
