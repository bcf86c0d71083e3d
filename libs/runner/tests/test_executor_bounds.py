"""What a function app leaves behind and sends back is bounded, on local_cwd with real
processes: a call's folder goes once its future gave the result (or on
``remove_ended_calls``), and a result over ``max_result_bytes`` fails in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from torchx_test_fixtures_function_calls import sleep_marked, wait_until_marked

runtime = pytest.importorskip(
    "torchx.runtime.function", reason="install torchx-runner[function] for function apps"
)

from torchx.runner import Executor, FunctionAppError, FunctionFuture  # noqa: E402
from torchx.specs import SpecsError  # noqa: E402


def blob(size: int) -> bytes:
    return b"x" * size


def fail_with(message: str) -> None:
    raise KeyError(message)


def die() -> None:
    os._exit(3)


def _ex(tmp_path: Path, **kw: object) -> Executor:
    return Executor(
        scheduler="local_cwd",
        transport=str(tmp_path / "transport"),
        poll_interval=0.2,
        **kw,  # type: ignore[arg-type]
    )


def _calls(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "transport" / "calls").iterdir())


def _pointers(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "transport" / "handles").iterdir())


def test_a_call_is_removed_once_its_future_gave_the_result(tmp_path: Path) -> None:
    ex = _ex(tmp_path)
    returned, raised = ex.submit(blob, 3), ex.submit(fail_with, "k")
    assert len(_calls(tmp_path)) == 2 and len(_pointers(tmp_path)) == 2
    assert returned.result(timeout=60) == b"xxx"
    with pytest.raises(KeyError, match="'k'"):
        raised.result(timeout=60)
    assert _calls(tmp_path) == [] and _pointers(tmp_path) == []
    # the outcome is held by the future: asking again needs no file
    assert returned.result() == b"xxx"
    assert isinstance(raised.exception(), KeyError)
    with pytest.raises(SpecsError) as info:
        ex.future(returned.handle)
    (line,) = str(info.value).splitlines()
    assert "a call is removed once a future gave its result" in line
    assert "Executor(keep_calls=True) keeps it" in line


def test_keep_calls_keeps_them_for_other_processes(tmp_path: Path) -> None:
    ex = _ex(tmp_path, keep_calls=True)
    future = ex.submit(blob, 2)
    assert future.result(timeout=60) == b"xx"
    (call,) = _calls(tmp_path)
    assert sorted(p.name for p in (tmp_path / "transport" / "calls" / call).iterdir()) == [
        "call.json",
        "call.pkl",
        "rank-0.json",
        "rank-0.pkl",
    ]
    assert ex.future(future.handle).result(timeout=60) == b"xx"
    assert len(_calls(tmp_path)) == 1


def test_a_map_leaves_no_calls_behind(tmp_path: Path) -> None:
    ex = _ex(tmp_path, max_in_flight=2)
    assert list(ex.map(blob, [1, 2, 3])) == [b"x", b"xx", b"xxx"]
    assert _calls(tmp_path) == [] and _pointers(tmp_path) == []


def test_remove_ended_calls_takes_the_ended_and_leaves_the_running(tmp_path: Path) -> None:
    ex = _ex(tmp_path)
    died = ex.submit(die)
    with pytest.raises(FunctionAppError):
        died.result(timeout=60)
    unread = ex.submit(blob, 1)
    ex._runner.wait(unread.handle, wait_interval=0.2, timeout=60)
    running = ex.submit(sleep_marked, str(tmp_path / "started"))
    wait_until_marked(running, tmp_path / "started")
    assert len(_calls(tmp_path)) == 3  # the died and unread calls were not taken
    assert ex.remove_ended_calls() == 2
    assert len(_calls(tmp_path)) == 1 and len(_pointers(tmp_path)) == 1
    assert running.cancel()
    ex._runner.wait(running.handle, wait_interval=0.2, timeout=60)
    assert ex.remove_ended_calls() == 1
    assert _calls(tmp_path) == [] and _pointers(tmp_path) == []
    assert ex.remove_ended_calls() == 0


def test_a_result_over_the_limit_fails_in_one_line_naming_limit_size_and_fix(
    tmp_path: Path,
) -> None:
    ex = _ex(tmp_path, max_result_bytes=10_000)
    future = ex.submit(blob, 100_000)
    with pytest.raises(runtime.ResultTooLargeError) as info:
        future.result(timeout=60)
    (line,) = str(info.value).splitlines()
    assert "pickles to 1000" in line and "over the call's limit of 10000 bytes" in line
    assert "Executor(max_result_bytes=1000" in line
    within = _ex(tmp_path, max_result_bytes=200_000).submit(blob, 100_000)
    assert within.result(timeout=60) == blob(100_000)
    assert _calls(tmp_path) == []


@pytest.mark.parametrize("bad", [0, -5, 2.5, "1G"])
def test_a_bad_result_limit_is_one_line_naming_the_field(tmp_path: Path, bad: object) -> None:
    with pytest.raises(SpecsError) as info:
        _ex(tmp_path, max_result_bytes=bad)
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"Executor max_result_bytes: got {bad!r}; expected an int of 1")


def test_a_call_of_several_ranks_goes_once_every_ranks_outcome_was_given(tmp_path: Path) -> None:
    from torchx.runner import get_runner

    store = runtime.Store(str(tmp_path / "call"))
    runtime.write_call(store, b"", world_size=2)
    removals: list[str] = []
    future = FunctionFuture(
        get_runner(),
        "local_cwd://torchx/x",
        store,
        2,
        "function",
        0.2,
        collect=lambda: removals.append("removed"),
    )
    runtime.record_return(store, 0, "a")
    assert future.result(timeout=5) == "a"
    assert removals == []  # rank 1 may still be writing into the folder
    runtime.record_return(store, 1, "b")
    assert future.result(timeout=5, all_ranks=True) == ["a", "b"]
    assert future.result(all_ranks=True) == ["a", "b"]
    assert removals == ["removed"]  # once
