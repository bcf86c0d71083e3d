"""How ``torchx.runner.as_completed`` / ``wait`` look at many function apps: one backend
query per look for all of them, a whole ``poll_interval`` between two queries, every
finished future in ``done``, and a FIRST_EXCEPTION wait that keeps its timeout. The apps
are a stand-in scheduler's; their outcome files are real ones."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "torchx.runtime.function", reason="install torchx-runner[function] for function apps"
)

from torchx.runner import (
    FIRST_COMPLETED,
    FIRST_EXCEPTION,
    DoneAndNotDone,
    FunctionFuture,
    Runner,
    as_completed,
    wait,
)
from torchx.runtime.function import Store, record_raise, record_return
from torchx.schedulers import DescribeAppResponse, Scheduler
from torchx.specs import AppDef, AppDryRunInfo, AppState


class _Apps(Scheduler[str]):
    """Apps in the states ``states`` gives (RUNNING when not named); every app ends
    SUCCEEDED once ``ends_after`` queries have seen it. ``queries`` holds each backend
    query: the app ids asked about, and when it began and ended; each takes ``cost`` s."""

    def __init__(self, backend: str, session_name: str) -> None:
        super().__init__(backend, session_name)
        self.states: dict[str, AppState] = {}
        self.ends_after: int | None = None
        self.cost = 0.0
        self.queries: list[tuple[list[str], float, float]] = []

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, Any]) -> AppDryRunInfo[str]:
        return AppDryRunInfo("", str)

    def schedule(self, dryrun_info: AppDryRunInfo[str]) -> str:
        raise NotImplementedError("the tests build their futures by hand")

    def _answer(self, app_ids: Sequence[str]) -> dict[str, DescribeAppResponse | None]:
        began = time.monotonic()
        time.sleep(self.cost)
        ended = self.ends_after is not None and len(self.queries) >= self.ends_after
        answers: dict[str, DescribeAppResponse | None] = {
            a: DescribeAppResponse(
                app_id=a,
                state=AppState.SUCCEEDED if ended else self.states.get(a, AppState.RUNNING),
            )
            for a in app_ids
        }
        self.queries.append((list(app_ids), began, time.monotonic()))
        return answers

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        return self._answer([app_id])[app_id]

    def describe_many(self, app_ids: Sequence[str]) -> dict[str, DescribeAppResponse | None]:
        return self._answer(app_ids)

    def _cancel_existing(self, app_id: str) -> None:
        self.states[app_id] = AppState.CANCELLED


@pytest.fixture
def apps() -> _Apps:
    return _Apps("standin", "s")


def _futures(apps: _Apps, tmp_path: Path, n: int, poll_interval: float) -> list[FunctionFuture]:
    runner = Runner("s", {apps.backend: lambda session_name, **kw: apps})
    return [
        FunctionFuture(
            runner,
            f"{apps.backend}://s/app-{i}",
            Store(str(tmp_path / f"call-{i}")),
            1,
            "function",
            poll_interval,
        )
        for i in range(n)
    ]


def _returned(future: FunctionFuture, value: object) -> None:
    future._store.make_folder()
    record_return(future._store, 0, value)


def _raised(future: FunctionFuture, exc: BaseException) -> None:
    future._store.make_folder()
    record_raise(future._store, 0, exc, "")


def test_a_hundred_pending_futures_cost_one_query_per_look_an_interval_apart(
    apps: _Apps, tmp_path: Path
) -> None:
    futures = _futures(apps, tmp_path, 100, poll_interval=0.1)
    apps.ends_after = 2  # the third query sees them ended
    apps.cost = 0.2  # each query takes longer than the interval between two
    assert sorted(as_completed(futures, timeout=120), key=id) == sorted(futures, key=id)
    handles = sorted(f"app-{i}" for i in range(100))
    assert [sorted(ids) for ids, _, _ in apps.queries] == [handles] * 3
    for (_, _, ended), (_, began, _) in zip(apps.queries[:-1], apps.queries[1:], strict=True):
        assert began - ended >= 0.1, "the next query came before a whole poll_interval"


def test_wait_returns_every_future_already_finished(apps: _Apps, tmp_path: Path) -> None:
    futures = _futures(apps, tmp_path, 4, poll_interval=0.1)
    _returned(futures[0], 1)
    _raised(futures[1], ValueError("one"))
    _raised(futures[2], KeyError("two"))
    finished, running = set(futures[:3]), {futures[3]}
    assert wait(futures, 120, FIRST_COMPLETED) == DoneAndNotDone(finished, running)
    assert wait(futures, 120, FIRST_EXCEPTION) == DoneAndNotDone(finished, running)
    assert isinstance(futures[2].exception(timeout=0), KeyError)


def test_first_exception_of_a_dead_app_keeps_the_timeout(apps: _Apps, tmp_path: Path) -> None:
    # An app that died without an outcome: result() gives late files two poll_intervals
    # (20 minutes here); wait must not spend them.
    dead, running = _futures(apps, tmp_path, 2, poll_interval=600)
    apps.states[dead.handle.rsplit("/", 1)[1]] = AppState.FAILED
    got: list[DoneAndNotDone] = []
    waiter = threading.Thread(
        target=lambda: got.append(wait([dead, running], 0.5, FIRST_EXCEPTION)), daemon=True
    )
    waiter.start()
    waiter.join(timeout=120)
    assert not waiter.is_alive(), "wait(FIRST_EXCEPTION, timeout=0.5) waited out the grace"
    assert got == [DoneAndNotDone({dead}, {running})]


def test_what_is_not_a_function_future_is_one_line(apps: _Apps, tmp_path: Path) -> None:
    (future,) = _futures(apps, tmp_path, 1, poll_interval=0.1)
    handle = future.handle
    with pytest.raises(TypeError, match=rf"^torchx.runner.wait: got '{handle}'; .*Runner.wait"):
        wait(handle)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got <FunctionFuture .*give a list of FunctionFut"):
        as_completed(future)  # type: ignore[arg-type]
    stdlib = concurrent.futures.Future[int]()
    with pytest.raises(TypeError, match=r"got <Future .*concurrent.futures.as_completed\)$"):
        as_completed([future, stdlib])  # type: ignore[list-item]
    with pytest.raises(TypeError) as e:
        wait([stdlib], timeout=0)  # type: ignore[list-item]
    assert "\n" not in str(e.value) and "concurrent.futures.wait" in str(e.value)
    assert apps.queries == []  # refused before anything was asked
