"""What a function app leaves behind and sends back is bounded, on local_cwd with real
processes: a call's folder goes once its future gave the result (or on
``remove_ended_calls``), and a result over ``max_result_bytes`` fails in one line."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
import weakref
from pathlib import Path

import pytest
from torchx_test_fixtures_function_calls import sleep_marked, wait_until_marked

runtime = pytest.importorskip(
    "torchx.runtime.function", reason="install torchx-runner[function] for function apps"
)

from torchx.runner import Executor, FunctionAppError, FunctionFuture  # noqa: E402
from torchx.runner import _executor_apps as executor_apps  # noqa: E402
from torchx.specs import SpecsError  # noqa: E402


def blob(size: int) -> bytes:
    return b"x" * size


def fail_with(message: str) -> None:
    raise KeyError(message)


def die() -> None:
    os._exit(3)


SUBMIT_AND_END = """
import sys
from torchx.runner import Executor

ex = Executor(scheduler="local_cwd", transport=sys.argv[1] + "/transport", poll_interval=0.2)
ex.submit(len, "x")
ex.shutdown(wait=True)
"""


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
    # submitted by a program that ended first: nobody will ask for its result
    subprocess.run([sys.executable, "-c", SUBMIT_AND_END, str(tmp_path)], check=True, timeout=120)
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


def test_remove_ended_calls_keeps_what_this_processs_futures_have_not_given(
    tmp_path: Path,
) -> None:
    ex = _ex(tmp_path)
    futures = [ex.submit(blob, n) for n in (1, 2)]
    rebuilt = _ex(tmp_path)
    again = rebuilt.future(futures[1].handle)
    for future in futures:
        ex._runner.wait(future.handle, wait_interval=0.2, timeout=60)
    assert ex.remove_ended_calls() == 0
    assert rebuilt.remove_ended_calls() == 0  # another executor's futures count too
    assert [f.result(timeout=60) for f in futures] == [b"x", b"xx"]
    assert _calls(tmp_path) == [] and _pointers(tmp_path) == []  # each future removed its own
    with pytest.raises(FunctionAppError) as info:  # it went with the other future's result
        again.result(timeout=60)
    assert "its call's folder" in str(info.value) and "is gone" in str(info.value)


WAIT_THEN_READ = """
import sys, time
from pathlib import Path
from torchx.runner import Executor

ex = Executor(scheduler="local_cwd", transport=sys.argv[1] + "/transport", poll_interval=0.2,
              keep_calls=sys.argv[2] == "keep")
future = ex.submit(len, "xyz")
ex._runner.wait(future.handle, wait_interval=0.2, timeout=60)
Path(sys.argv[1], "ended").write_text(future.handle)
while not Path(sys.argv[1], "cleaned").exists():
    time.sleep(0.05)
print(future.result(timeout=60))
"""


@pytest.mark.parametrize("keep", ["keep", "remove"])
def test_remove_ended_calls_leaves_what_another_live_process_may_still_read(
    tmp_path: Path, keep: str
) -> None:
    waiter = subprocess.Popen(
        [sys.executable, "-c", WAIT_THEN_READ, str(tmp_path), keep],
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (tmp_path / "ended").exists():
        assert waiter.poll() is None and time.monotonic() < deadline, "the app never ended"
        time.sleep(0.05)
    assert _ex(tmp_path).remove_ended_calls() == 0  # the waiter's future holds the call
    (tmp_path / "cleaned").touch()
    out, _ = waiter.communicate(timeout=120)
    assert waiter.returncode == 0 and out.strip() == "3"
    # once that process has ended (its future gone), the kept call is anyone's to remove
    assert _ex(tmp_path).remove_ended_calls() == (1 if keep == "keep" else 0)
    assert _calls(tmp_path) == []


def _pointer(tmp_path: Path, handle: str, call: str) -> None:
    from urllib.parse import quote

    handles = runtime.Store(str(tmp_path / "transport" / "handles"))
    handles.make_folder()
    pointer = {"version": 1, "call": call, "role": "function"}
    handles.write(quote(handle, safe="") + ".json", json.dumps(pointer).encode())


def test_remove_ended_calls_leaves_folders_outside_its_calls_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copied transport's pointers name the original's calls: those are not its own. A
    call folder that is a link goes as a link: what it leads to stays."""
    monkeypatch.setattr(executor_apps, "STATUS_BATCH", 2)  # five calls: three batches
    victim = tmp_path / "original" / "calls" / "x"
    victim.mkdir(parents=True)
    (victim / "precious.txt").write_text("kept")
    calls = tmp_path / "transport" / "calls"
    (calls / "sibling").mkdir(parents=True)
    (calls / "sibling" / "call.json").write_text("{}")
    (calls / "link").symlink_to(victim)
    (calls / "to-sibling").symlink_to(calls / "sibling")
    _pointer(tmp_path, "local_cwd://torchx/function-nosuchapp1", str(victim))
    _pointer(tmp_path, "local_cwd://torchx/function-nosuchapp2", str(tmp_path / "transport"))
    _pointer(tmp_path, "local_cwd://torchx/function-nosuchapp3", f"{calls}/..")
    _pointer(tmp_path, "local_cwd://torchx/function-nosuchapp4", f"{calls}/link")
    _pointer(tmp_path, "local_cwd://torchx/function-nosuchapp5", f"{calls}/to-sibling")
    assert _ex(tmp_path).remove_ended_calls() == 5  # their pointers go
    assert _pointers(tmp_path) == []
    assert (victim / "precious.txt").read_text() == "kept"
    assert _calls(tmp_path) == ["sibling"]  # the links went, not the folder one names
    assert (calls / "sibling" / "call.json").read_text() == "{}"
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("torchx Executor: left 3 folder(s) outside ")
    assert "only the pointers were removed" in line


def test_a_call_that_cannot_be_removed_keeps_its_pointer_and_the_rest_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = tmp_path / "transport" / "calls"
    (calls / "good").mkdir(parents=True)
    (calls / "good" / "call.json").write_text("{}")
    (calls / "stuck").write_text("a file where a folder should be: rmtree refuses it")
    _pointer(tmp_path, "local_cwd://torchx/function-nosuchapp1", str(calls / "stuck"))
    _pointer(tmp_path, "local_cwd://torchx/function-nosuchapp2", str(calls / "good"))
    assert _ex(tmp_path).remove_ended_calls() == 1
    assert _calls(tmp_path) == ["stuck"]
    assert _pointers(tmp_path) == ["local_cwd%3A%2F%2Ftorchx%2Ffunction-nosuchapp1.json"]
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"torchx Executor: could not remove 1 call(s), e.g. {calls}/stuck (")
    assert "call remove_ended_calls() again" in line


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


@pytest.mark.parametrize("bad", [0, -5, 2.5, "1G", 2**63, 2**80])
def test_a_bad_result_limit_is_one_line_naming_the_field(tmp_path: Path, bad: object) -> None:
    with pytest.raises(SpecsError) as info:
        _ex(tmp_path, max_result_bytes=bad)
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"Executor max_result_bytes: got {bad!r}; expected an int of bytes")
    assert f"from 1 to {runtime.MAX_RESULT_LIMIT}" in line


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
    with pytest.raises(FunctionAppError):  # its app is gone, without rank 1's outcome
        future.result(timeout=5)
    assert removals == []  # rank 1 may still be writing into the folder
    runtime.record_return(store, 1, "b")
    assert future.result(timeout=5) == "a"
    assert future.result(timeout=5, all_ranks=True) == ["a", "b"]
    assert future.result(all_ranks=True) == ["a", "b"]
    assert removals == ["removed"]  # once


def test_a_future_its_caller_dropped_is_not_kept_and_its_call_goes_once_ended(
    tmp_path: Path,
) -> None:
    ex = _ex(tmp_path)
    future = ex.submit(blob, 1)
    handle, held = future.handle, weakref.ref(future)
    del future
    gc.collect()
    assert held() is None  # the executor does not keep it (nor a result it would hold)
    ex._runner.wait(handle, wait_interval=0.2, timeout=60)
    assert ex.remove_ended_calls() == 1  # nobody can ask for its result
    assert _calls(tmp_path) == [] and _pointers(tmp_path) == []


def test_an_executor_forgets_the_apps_that_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executor_apps, "FIRST_LOOK", 3)
    ex = _ex(tmp_path)
    read = ex.submit(blob, 1)
    assert read.result(timeout=60) == b"x"
    dropped = ex.submit(blob, 2).handle
    ex._runner.wait(dropped, wait_interval=0.2, timeout=60)
    running = ex.submit(sleep_marked, str(tmp_path / "started"))
    try:
        # the third app made it look: the one whose result was read and the dropped one
        # that ended are forgotten, the one still running is held
        assert [handle for handle, _ in ex._apps.held()] == [running.handle]
        assert len(ex._apps) == 1
    finally:
        running.cancel()


def test_shutdown_waits_for_and_ctrl_c_cancels_apps_whose_futures_were_dropped(
    tmp_path: Path,
) -> None:
    from torchx.runner import get_runner
    from torchx.specs import AppState

    ex = _ex(tmp_path)
    short = ex.submit(sleep_marked, str(tmp_path / "short"), 1).handle
    ex.shutdown(wait=True)
    status = get_runner().status(short)
    assert status is not None and status.state == AppState.SUCCEEDED
    ex = _ex(tmp_path)
    future = ex.submit(sleep_marked, str(tmp_path / "long"))
    wait_until_marked(future, tmp_path / "long")
    long = future.handle
    del future
    with pytest.raises(KeyboardInterrupt), ex:
        raise KeyboardInterrupt
    status = get_runner().wait(long, wait_interval=0.2, timeout=60)
    assert status is not None and status.state == AppState.CANCELLED
