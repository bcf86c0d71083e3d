"""``torchx list`` sorts and filters apps by submit time even when a scheduler (a user's
own, say) gives zone-aware times: comparing them with naive ones must not raise."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, cast

from torchx.runner._listing import newest_first
from torchx.schedulers import ListAppResponse, Scheduler
from torchx.specs import AppState


class _Listing:
    def __init__(self, apps: list[ListAppResponse]) -> None:
        self.apps = apps

    def list(self) -> list[ListAppResponse]:
        return list(self.apps)


def test_zone_aware_and_naive_times_sort_and_filter_together() -> None:
    now = datetime.now().replace(microsecond=0)
    apps = [
        ListAppResponse("old", AppState.SUCCEEDED, submitted_at=now - timedelta(hours=3)),
        ListAppResponse(
            "aware",
            AppState.RUNNING,
            submitted_at=(now - timedelta(minutes=5)).astimezone(timezone.utc),
        ),
        ListAppResponse("unknown", AppState.UNKNOWN),
        ListAppResponse("new", AppState.RUNNING, submitted_at=now),
    ]
    sched = cast(Scheduler[Any], _Listing(apps))
    every = [a.app_id for a in newest_first(sched, None, dict)]
    assert every == ["new", "aware", "old", "unknown"]
    recent = [a.app_id for a in newest_first(sched, now - timedelta(hours=1), dict)]
    assert recent == ["new", "aware"]
    # a zone-aware --since works too
    since = (now - timedelta(hours=1)).astimezone(timezone.utc)
    assert [a.app_id for a in newest_first(sched, since, dict)] == ["new", "aware"]
