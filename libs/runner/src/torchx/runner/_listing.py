"""Asking a scheduler for its apps: with the run options it needs, newest first."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from torchx.schedulers import ListAppResponse, Scheduler
from torchx.specs import CfgVal


def list_apps(
    sched: Scheduler[Any], cfg: Callable[[], Mapping[str, CfgVal]]
) -> list[ListAppResponse]:
    """``sched.list()``, given the resolved run options if its ``list`` takes ``cfg``."""
    if "cfg" in inspect.signature(sched.list).parameters:
        apps: list[ListAppResponse] = sched.list(cfg=cfg())  # type: ignore[call-arg]
        return apps
    return sched.list()


def newest_first(
    sched: Scheduler[Any],
    submitted_after: datetime | None,
    cfg: Callable[[], Mapping[str, CfgVal]],
) -> Iterator[ListAppResponse]:
    lazy = getattr(sched, "list_newest", None)
    if lazy is not None:
        found: Iterator[ListAppResponse] = lazy(submitted_after)
        yield from found
        return
    apps = list_apps(sched, cfg)
    apps.sort(key=_submitted, reverse=True)
    after = _naive(submitted_after) if submitted_after is not None else None
    for app in apps:
        if after is not None and _submitted(app) < after:
            continue
        yield app


def _naive(t: datetime) -> datetime:
    # A scheduler of a user's may give zone-aware times; they do not compare with naive ones.
    return t if t.tzinfo is None else t.astimezone().replace(tzinfo=None)


def _submitted(app: ListAppResponse) -> datetime:
    return _naive(app.submitted_at) if app.submitted_at is not None else datetime.min
