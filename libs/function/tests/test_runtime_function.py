"""torchx.runtime.function: a call written, run as ``python -m torchx.runtime.function``
in a real process, and its outcome read back."""

from __future__ import annotations

import functools
import os
import stat
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import pytest
from torchx_test_fixtures_function_calls import add, fail

from torchx.runtime.function import (
    CallFormatError,
    RemoteError,
    RemoteTraceback,
    Store,
    UntrustedFileError,
    dumps_call,
    read_outcome,
    run_call,
    write_call,
)


class Unpicklable(Exception):
    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("this exception refuses to be pickled")


def raise_unpicklable() -> None:
    raise Unpicklable("odd")


def return_lock() -> object:
    return threading.Lock()


def _job(folder: Path, elsewhere: bool = False, **env: str) -> subprocess.CompletedProcess[str]:
    """The job's process; ``elsewhere``: isolated (-I) in /, where this module is not found."""
    isolated = ["-I"] if elsewhere else []
    return subprocess.run(
        [sys.executable, *isolated, "-m", "torchx.runtime.function", str(folder)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd="/" if elsewhere else None,
        timeout=60,
    )


def _call(tmp_path: Path, fn: object, *args: object) -> Store:
    store = Store(str(tmp_path / "call"))
    write_call(store, dumps_call(fn, args, {}), world_size=1)  # type: ignore[arg-type]
    return store


def test_a_value_comes_back_from_a_job_process(tmp_path: Path) -> None:
    store = _call(tmp_path, add, 5, 7)
    done = _job(tmp_path / "call")
    assert done.returncode == 0, done.stderr
    outcome = read_outcome(store, 0)
    assert outcome is not None and not outcome.raised
    assert outcome.unwrap() == 12


def test_the_rank_comes_from_the_environment(tmp_path: Path) -> None:
    store = _call(tmp_path, add, 1, 1)
    assert _job(tmp_path / "call", RANK="3").returncode == 0
    assert read_outcome(store, 0) is None
    outcome = read_outcome(store, 3)
    assert outcome is not None and outcome.value == 2


def test_a_raise_comes_back_as_its_type_with_the_remote_frames(tmp_path: Path) -> None:
    store = _call(tmp_path, fail, "x")
    done = _job(tmp_path / "call")
    assert done.returncode == 1
    assert "ValueError: x" in done.stderr  # the job's log says it too
    outcome = read_outcome(store, 0)
    assert outcome is not None and outcome.raised
    with pytest.raises(ValueError, match=r"^x$") as info:
        outcome.unwrap()
    cause = info.value.__cause__
    assert isinstance(cause, RemoteTraceback)
    assert "in fail\n    raise ValueError(message)" in cause.text
    assert "_entry.py" not in cause.text  # the runner's own frame is left out
    shown = "".join(traceback.format_exception(info.value))
    assert "in fail" in shown and "raise ValueError(message)" in shown


def test_an_exception_that_cannot_be_pickled_keeps_its_type_name_and_text(
    tmp_path: Path,
) -> None:
    store = _call(tmp_path, raise_unpicklable)
    assert _job(tmp_path / "call").returncode == 1
    outcome = read_outcome(store, 0)
    assert outcome is not None
    with pytest.raises(RemoteError) as info:
        outcome.unwrap()
    assert info.value.type_name.endswith("Unpicklable")
    assert info.value.message == "odd"
    assert "raise_unpicklable" in info.value.traceback_text


def test_a_return_value_that_cannot_be_pickled_is_a_type_error(tmp_path: Path) -> None:
    store = _call(tmp_path, return_lock)
    assert _job(tmp_path / "call").returncode == 1
    outcome = read_outcome(store, 0)
    assert outcome is not None
    with pytest.raises(TypeError, match=r"cannot be pickled .*return plain data"):
        outcome.unwrap()


def test_files_are_the_owners_alone(tmp_path: Path) -> None:
    store = _call(tmp_path, add, 1, 2)
    assert _job(tmp_path / "call").returncode == 0
    folder = tmp_path / "call"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["call.json", "call.pkl", "rank-0.json", "rank-0.pkl"]
    for p in folder.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    assert read_outcome(store, 0) is not None


def test_a_result_someone_else_could_write_is_refused(tmp_path: Path) -> None:
    store = _call(tmp_path, add, 1, 2)
    assert _job(tmp_path / "call").returncode == 0
    result = tmp_path / "call" / "rank-0.pkl"
    result.chmod(0o620)
    with pytest.raises(UntrustedFileError, match=r"writable by others .*chmod go-w"):
        read_outcome(store, 0)
    result.chmod(0o600)
    if os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    os.chown(result, 65534, 65534)
    with pytest.raises(UntrustedFileError) as info:
        read_outcome(store, 0)
    (line,) = str(info.value).splitlines()
    assert "owned by uid 65534, not by you" in line and "runs code when it is read" in line


def test_a_folder_of_another_version_is_refused(tmp_path: Path) -> None:
    store = _call(tmp_path, add, 1, 2)
    (tmp_path / "call" / "call.json").write_text(
        '{"format": "torchx-function-call", "version": 99, "world_size": 1}'
    )
    assert run_call(store.url) == 1  # the job says why in its outcome
    outcome = read_outcome(store, 0)
    assert outcome is not None
    with pytest.raises(CallFormatError, match=r"version 99.*same version on both sides"):
        outcome.unwrap()


def test_any_fsspec_url_carries_the_call() -> None:
    store = Store("memory://torchx-function-test/call1")
    write_call(store, dumps_call(add, (2, 3), {}), world_size=1)
    assert run_call("memory://torchx-function-test/call1") == 0
    outcome = read_outcome(store, 0)
    assert outcome is not None and outcome.value == 5


class Point:
    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y


def norm1(p: Point, scale: int = 1) -> int:
    return scale * (abs(p.x) + abs(p.y))


def test_partials_and_argument_classes_from_the_callers_files_travel_by_value(
    tmp_path: Path,
) -> None:
    """Neither this module's function under a partial nor its class is importable there."""
    store = Store(str(tmp_path / "call"))
    write_call(store, dumps_call(functools.partial(norm1, scale=2), (Point(3, -4),), {}), 1)
    done = _job(tmp_path / "call", elsewhere=True)
    assert done.returncode == 0, done.stderr
    outcome = read_outcome(store, 0)
    assert outcome is not None and outcome.value == 14


def test_bad_usage_exits_2_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "torchx.runtime.function"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr == "usage: python -m torchx.runtime.function CALL_URL\n"


def test_functions_from_the_callers_files_travel_by_value(tmp_path: Path) -> None:
    """The module of ``add`` is not importable by the job; the call still runs there."""
    store = _call(tmp_path, add, 20, 22)
    done = _job(tmp_path / "call", elsewhere=True)
    assert done.returncode == 0, done.stderr
    outcome = read_outcome(store, 0)
    assert outcome is not None and outcome.value == 42


def test_the_job_side_imports_nothing_else_of_torchx_nor_fsspec_for_a_local_folder(
    tmp_path: Path,
) -> None:
    _call(tmp_path, add, 1, 2)
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['x', {str(tmp_path / 'call')!r}]\n"
        "from torchx.runtime.function._entry import main\n"
        "assert main() == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('torchx.') and not "
        "m.startswith('torchx.runtime.function') and m != 'torchx.runtime'), "
        "'fsspec' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[] False\n"


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for this one")


def raise_unprintable() -> None:
    raise UnprintableError()


def test_an_exception_whose_str_fails_still_comes_back(tmp_path: Path) -> None:
    store = _call(tmp_path, raise_unprintable)
    assert _job(tmp_path / "call").returncode == 1
    outcome = read_outcome(store, 0)
    assert outcome is not None and outcome.raised
    with pytest.raises(UnprintableError):
        outcome.unwrap()
    assert "raise_unprintable" in outcome.traceback_text


def test_a_missing_call_folder_is_one_error_and_exit_1(tmp_path: Path) -> None:
    done = _job(tmp_path / "never-written")
    assert done.returncode == 1
    assert "CallFormatError" in done.stderr and "the call was never written there" in done.stderr
    assert done.stderr.splitlines() == [
        f"CallFormatError: {tmp_path / 'never-written' / 'call.json'}: no such file; "
        "the call was never written there"
    ]
    assert not (tmp_path / "never-written").exists()


def test_a_call_not_json_says_why_its_outcome_could_not_be_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store(str(tmp_path / "call"))
    store.make_folder()
    store.write("call.json", b"not json")
    (tmp_path / "call" / "rank-0.json").mkdir()  # the outcome cannot be written there
    assert run_call(store.url, rank=0) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"CallFormatError: {tmp_path / 'call' / 'call.json'}: not JSON")
    assert lines[1].startswith("torchx.runtime.function: ") and "rank-0.json" in lines[1]
