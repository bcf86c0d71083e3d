"""Waiting on many apps of a scheduler that answers for many at once: one backend query
per look for all of them (``Scheduler.describe_many``), not one per app."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from torchx.runner import Runner
from torchx.schedulers import DescribeAppResponse, Scheduler
from torchx.specs import AppDef, AppDryRunInfo, AppState


class _Counted(Scheduler[str]):
    """App ``app-N`` ends (FAILED for ``app-bad``) once N looks have seen it running;
    ``queries`` lists each backend query: the app ids it asked about."""

    _wait_poll_s = (0.001, 0.01)

    def __init__(self, backend: str, session_name: str) -> None:
        super().__init__(backend, session_name)
        self.queries: list[list[str]] = []
        self.looks: dict[str, int] = {}
        self.lock = threading.Lock()

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, Any]) -> AppDryRunInfo[str]:
        return AppDryRunInfo("", str)

    def schedule(self, dryrun_info: AppDryRunInfo[str]) -> str:
        return "app-1"

    def _state(self, app_id: str) -> DescribeAppResponse | None:
        if app_id == "gone":
            return None
        with self.lock:
            seen = self.looks[app_id] = self.looks.get(app_id, 0) + 1
        # an app named "sweep" (id sweep-LETTERS) ends at its second look
        ends = (
            3
            if app_id == "app-bad"
            else 2
            if app_id.startswith("sweep-")
            else int(app_id.split("-")[1])
        )
        if seen <= ends:
            return DescribeAppResponse(app_id=app_id, state=AppState.RUNNING)
        state = AppState.FAILED if app_id == "app-bad" else AppState.SUCCEEDED
        return DescribeAppResponse(app_id=app_id, state=state)

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        with self.lock:
            self.queries.append([app_id])
        return self._state(app_id)

    def _cancel_existing(self, app_id: str) -> None:
        pass


class _Batched(_Counted):
    def describe_many(self, app_ids: Sequence[str]) -> dict[str, DescribeAppResponse | None]:
        with self.lock:
            self.queries.append(list(app_ids))
        return {a: self._state(a) for a in app_ids}


def _runner(sched: _Counted) -> Runner:
    return Runner("s", {sched.backend: lambda session_name, **kw: sched})


def test_apps_of_a_batching_scheduler_are_asked_about_together() -> None:
    sched = _Batched("batched", "s")
    handles = ["batched://s/app-1", "batched://s/app-bad", "batched://s/app-5", "batched://s/gone"]
    got = list(_runner(sched).wait_each(handles, wait_interval=0.01))
    # in the order they ended; the unknown one at the first look
    assert [h for h, _ in got] == handles[3:] + handles[:3]
    states = {h: (s.state if s else None) for h, s in got}
    assert states == {
        "batched://s/app-1": AppState.SUCCEEDED,
        "batched://s/app-bad": AppState.FAILED,
        "batched://s/app-5": AppState.SUCCEEDED,
        "batched://s/gone": None,
    }
    # six looks (app-5 ends at its sixth), each ONE query of the apps still running
    assert sched.queries == [
        ["app-1", "app-bad", "app-5", "gone"],
        ["app-1", "app-bad", "app-5"],
        ["app-bad", "app-5"],
        ["app-bad", "app-5"],
        ["app-5"],
        ["app-5"],
    ]


def test_other_schedulers_keep_one_describe_per_app() -> None:
    sched = _Counted("plain", "s")
    assert not sched.answers_many() and _Batched("b", "s").answers_many()
    handles = ["plain://s/app-1", "plain://s/app-2"]
    got = dict(_runner(sched).wait_each(handles, wait_interval=0.01))
    assert {h: s.state for h, s in got.items() if s} == dict.fromkeys(handles, AppState.SUCCEEDED)
    assert all(len(q) == 1 for q in sched.queries)


def test_a_timeout_yields_what_still_runs_with_its_status() -> None:
    sched = _Batched("batched", "s")
    got = dict(_runner(sched).wait_each(["batched://s/app-100000"], timeout=0.05))
    status = got["batched://s/app-100000"]
    assert status is not None and status.state == AppState.RUNNING
    assert len(sched.queries) >= 2  # looks until the timeout, then its full description


def test_an_id_shaped_as_a_sweeps_without_its_record_is_waited_on_as_an_app() -> None:
    """Every app named ``sweep`` gets an id of a sweep's shape (``sweep-`` and random
    letters). With no sweep record of that id here it is an app: asked of its scheduler
    with the others, and waited on until it ends."""
    sched = _Batched("batched", "s")
    named_sweep, app = "batched://s/sweep-abcdefgh2345", "batched://s/app-3"
    got = dict(_runner(sched).wait_each([named_sweep, app], wait_interval=0.01))
    assert {h: s.state if s else None for h, s in got.items()} == {
        named_sweep: AppState.SUCCEEDED,
        app: AppState.SUCCEEDED,
    }
    assert ["sweep-abcdefgh2345", "app-3"] in sched.queries  # one query for both
