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
    apps.sort(key=lambda a: a.submitted_at or datetime.min, reverse=True)
    for app in apps:
        if submitted_after is not None and (app.submitted_at or datetime.min) < submitted_after:
            continue
        yield app
