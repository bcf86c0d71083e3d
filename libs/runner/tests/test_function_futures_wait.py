"""Waiting on several function apps at once (``torchx.runner.as_completed`` / ``wait``) and
the errors a first hour meets: real apps on local_cwd."""

from __future__ import annotations

import concurrent.futures
import time
from pathlib import Path

import pytest
from torchx_test_fixtures_function_calls import add, fail

pytest.importorskip(
    "torchx.runtime.function", reason="install torchx-runner[function] for function apps"
)

from torchx.runner import (
    ALL_COMPLETED,
    FIRST_COMPLETED,
    FIRST_EXCEPTION,
    DoneAndNotDone,
    Executor,
    FunctionFuture,
    as_completed,
    wait,
)
from torchx.specs import SpecsError


def sleep_after_marking(marker: str) -> None:
    Path(marker).write_text("started")
    time.sleep(600)


@pytest.fixture
def ex() -> Executor:
    return Executor(scheduler="local_cwd", poll_interval=0.2)


def _running(ex: Executor, marker: Path) -> FunctionFuture:
    future = ex.submit(sleep_after_marking, str(marker))
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert time.monotonic() < deadline, "the function never started"
            time.sleep(0.05)
    except BaseException:
        future.cancel()  # never leave a 600 s app behind
        raise
    return future


def test_as_completed_yields_each_future_once_with_its_value(ex: Executor) -> None:
    futures = [ex.submit(add, i, 10) for i in range(3)]
    seen = list(as_completed(futures + futures[:1], timeout=120))
    assert sorted(seen, key=id) == sorted(futures, key=id)
    assert sorted(f.result() for f in seen) == [10, 11, 12]


def test_as_completed_times_out_naming_what_is_left(ex: Executor, tmp_path: Path) -> None:
    done = ex.submit(add, 1, 2)
    sleeper = _running(ex, tmp_path / "started")
    try:
        assert done.result(timeout=120) == 3  # so the timeout below cannot catch it unfinished
        finished: list[FunctionFuture] = []
        with pytest.raises(concurrent.futures.TimeoutError, match=r"^1 of 2 function apps") as e:
            finished.extend(as_completed([done, sleeper], timeout=1))
        assert finished == [done]
        assert sleeper.handle in str(e.value) and "cancel()" in str(e.value)
    finally:
        sleeper.cancel()
    assert list(as_completed([sleeper], timeout=60)) == [sleeper]


def test_wait_returns_on_the_first_exception_and_after_a_cancel(
    ex: Executor, tmp_path: Path
) -> None:
    sleeper = _running(ex, tmp_path / "started")
    try:
        raising = ex.submit(fail, "no")
        got = wait([sleeper, raising], timeout=120, return_when=FIRST_EXCEPTION)
        assert got == DoneAndNotDone({raising}, {sleeper})
        assert isinstance(raising.exception(), ValueError)
        assert wait([sleeper], timeout=0.5) == DoneAndNotDone(set(), {sleeper})
        assert wait([sleeper, raising], return_when=FIRST_COMPLETED).done == {raising}
    finally:
        sleeper.cancel()
    assert wait([sleeper, raising], timeout=60, return_when=ALL_COMPLETED).not_done == set()


def test_wait_refuses_an_unknown_return_when(ex: Executor) -> None:
    with pytest.raises(SpecsError, match=r"wait return_when: got 'FIRST'.*FIRST_EXCEPTION"):
        wait([], return_when="FIRST")


def test_a_transport_whose_folder_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("")
    transport = str(tmp_path / "a_file" / "functions")
    ex = Executor(scheduler="local_cwd", transport=transport)
    with pytest.raises(SpecsError, match=r"Executor transport: got .*its folder cannot be made"):
        ex.submit(add, 1, 2)
