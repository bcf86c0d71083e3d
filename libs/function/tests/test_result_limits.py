"""What a call may write back is bounded: a result over the call's ``max_result_bytes`` is
refused by the job (in a real process) and by the reader, and the outcome is written before
anything that could fail after it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cloudpickle  # type: ignore[import-untyped]
import pytest

from torchx.runtime.function import (
    DEFAULT_MAX_RESULT_BYTES,
    MAX_RECORD_BYTES,
    MAX_RESULT_LIMIT,
    MAX_TEXT_BYTES,
    CallFormatError,
    RemoteError,
    ResultTooLargeError,
    Store,
    child_name,
    dumps_call,
    read_call_meta,
    read_outcome,
    record_return,
    result_limit,
    run_call,
    write_call,
)


def blob(size: int) -> bytes:
    return b"x" * size


def fail_at_length(size: int) -> None:
    raise ValueError("m" * size)


def fail_with_text(text: str) -> None:
    raise ValueError(text)


class Heavy(Exception):
    """An exception carrying a large payload: its pickle is as large as the payload."""

    def __init__(self, payload: bytes) -> None:
        super().__init__("heavy")
        self.payload = payload


def raise_heavy(size: int) -> None:
    raise Heavy(b"y" * size)


def _call(tmp_path: Path, fn: object, *args: object, limit: int) -> Store:
    store = Store(str(tmp_path / "call"))
    write_call(store, dumps_call(fn, args, {}), 1, max_result_bytes=limit)  # type: ignore[arg-type]
    return store


def _job(folder: Path, stderr: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "torchx.runtime.function", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )


def test_a_result_over_the_limit_is_recorded_as_an_error_naming_limit_size_and_fix(
    tmp_path: Path,
) -> None:
    store = _call(tmp_path, blob, 100_000, limit=10_000)
    job = _job(tmp_path / "call", stderr=subprocess.PIPE)
    _, err = job.communicate(timeout=60)
    assert job.returncode == 1
    outcome = read_outcome(store, 0, limit=10_000)
    assert outcome is not None and outcome.raised
    with pytest.raises(ResultTooLargeError) as info:
        outcome.unwrap()
    (line,) = str(info.value).splitlines()
    size = len(cloudpickle.dumps(blob(100_000)))
    assert f"pickles to {size} bytes" in line
    assert "limit of 10000 bytes (max_result_bytes)" in line
    assert f"Executor(max_result_bytes={size})" in line
    assert line in err.decode()  # the job's log says it too
    # the large result itself was never written
    assert sorted(p.name for p in (tmp_path / "call").iterdir()) == [
        "call.json",
        "call.pkl",
        "rank-0.json",
        "rank-0.pkl",
    ]
    assert (tmp_path / "call" / "rank-0.pkl").stat().st_size < 10_000


def test_a_result_within_its_raised_limit_comes_back(tmp_path: Path) -> None:
    store = _call(tmp_path, blob, 100_000, limit=200_000)
    assert read_call_meta(store)["max_result_bytes"] == 200_000
    assert run_call(store.url, rank=0) == 0
    outcome = read_outcome(store, 0, limit=200_000)
    assert outcome is not None and outcome.value == blob(100_000)


def test_a_call_without_a_limit_has_the_default(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "call"))
    write_call(store, dumps_call(blob, (3,), {}), 1)
    meta = json.loads((tmp_path / "call" / "call.json").read_text())
    del meta["max_result_bytes"]  # as a launcher before the limit wrote it
    (tmp_path / "call" / "call.json").write_text(json.dumps(meta))
    assert result_limit(read_call_meta(store)) == DEFAULT_MAX_RESULT_BYTES
    assert run_call(store.url, rank=0) == 0


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1G", MAX_RESULT_LIMIT + 1, 2**63, 2**70])
def test_a_bad_limit_is_one_line_naming_it_and_the_range(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError) as info:
        write_call(Store(str(tmp_path / "call")), b"", 1, max_result_bytes=bad)  # type: ignore[arg-type]
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"max_result_bytes={bad!r}: expected an int of bytes from 1 to ")
    assert str(MAX_RESULT_LIMIT) in line
    assert not (tmp_path / "call").exists()


def test_the_largest_limit_reads_a_small_result(tmp_path: Path) -> None:
    """A reader asks for the limit and one byte: at the largest limit that still fits a
    read, and with no room made for bytes the file does not hold."""
    for limit in (1 << 50, MAX_RESULT_LIMIT):
        store = _call(tmp_path / str(limit), blob, 7, limit=limit)
        assert result_limit(read_call_meta(store)) == limit
        assert run_call(store.url, rank=0) == 0
        outcome = read_outcome(store, 0, limit=limit)
        assert outcome is not None and outcome.value == blob(7)


def test_the_reader_refuses_a_larger_file_without_unpickling_it(tmp_path: Path) -> None:
    """A job that did not obey the limit (another version, a hand-written file)."""
    store = _call(tmp_path, blob, 1, limit=10_000)
    assert record_return(store, 0, blob(50_000), limit=DEFAULT_MAX_RESULT_BYTES)
    with pytest.raises(ResultTooLargeError, match=r"rank-0.pkl: over the call's limit of 10000"):
        read_outcome(store, 0, limit=10_000)
    # the reader reads at most the limit and one byte: a file cut there still reads as over
    (tmp_path / "call" / "rank-0.pkl").write_bytes(b"\x80" + b"z" * 10_000)
    with pytest.raises(ResultTooLargeError):
        read_outcome(store, 0, limit=10_000)


def test_an_exception_over_the_limit_comes_back_as_its_text(tmp_path: Path) -> None:
    store = _call(tmp_path, raise_heavy, 50_000, limit=10_000)
    assert run_call(store.url, rank=0) == 1
    outcome = read_outcome(store, 0, limit=10_000)
    assert outcome is not None
    with pytest.raises(RemoteError) as info:
        outcome.unwrap()
    assert info.value.type_name.endswith("Heavy") and info.value.message == "heavy"
    assert not (tmp_path / "call" / "rank-0.pkl").exists()


def test_a_huge_message_is_cut_so_the_outcome_stays_readable(tmp_path: Path) -> None:
    store = _call(tmp_path, fail_at_length, 3 * MAX_RECORD_BYTES, limit=DEFAULT_MAX_RESULT_BYTES)
    assert run_call(store.url, rank=0) == 1
    assert (tmp_path / "call" / "rank-0.json").stat().st_size < MAX_RECORD_BYTES
    outcome = read_outcome(store, 0)
    assert outcome is not None and outcome.raised
    with pytest.raises(ValueError):  # the exception itself, pickled whole
        outcome.unwrap()


@pytest.mark.parametrize("char", ["\N{GRINNING FACE}", "\N{CJK UNIFIED IDEOGRAPH-6F22}", "\x01"])
@pytest.mark.parametrize("limit", [DEFAULT_MAX_RESULT_BYTES, 10_000])
def test_a_message_of_escaped_characters_is_cut_by_its_json_size(
    tmp_path: Path, char: str, limit: int
) -> None:
    """Each of these is 6 or 12 bytes in the JSON: cut by characters, a message and its
    traceback (which repeats it) would make the outcome unreadable."""
    text = char * 200_000
    store = _call(tmp_path, fail_with_text, text, limit=limit)
    assert run_call(store.url, rank=0) == 1
    written = (tmp_path / "call" / "rank-0.json").read_bytes()
    assert len(written) <= MAX_RECORD_BYTES
    record = json.loads(written)
    for key in ("message", "traceback", "pickle_error"):
        assert len(json.dumps(record.get(key, ""))) - 2 <= MAX_TEXT_BYTES
    outcome = read_outcome(store, 0, limit=limit)
    assert outcome is not None and outcome.raised
    if limit == DEFAULT_MAX_RESULT_BYTES:
        with pytest.raises(ValueError) as whole:  # the exception itself, pickled whole
            outcome.unwrap()
        assert str(whole.value) == text
        return
    with pytest.raises(RemoteError) as info:  # over the limit: its text, cut
        outcome.unwrap()
    kept = info.value.message.removesuffix(" characters cut]")
    kept, cut = kept.rsplit(" [", 1)
    assert kept == char * len(kept) and len(kept) + int(cut) == len(text)
    assert len(kept) > MAX_TEXT_BYTES // 13  # cut to the budget, not far below it
    # the traceback keeps its end, where it was raised
    assert info.value.traceback_text.startswith("[")
    assert info.value.traceback_text.endswith(char * 100 + "\n")


def test_child_name_takes_only_an_entry_directly_in_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "calls"
    (folder / "a").mkdir(parents=True)
    (tmp_path / "victim").mkdir()
    (folder / "link").symlink_to(tmp_path / "victim")
    (folder / "sibling").symlink_to(folder / "a")
    (tmp_path / "calls-too").symlink_to(folder)
    assert child_name(str(folder), str(folder / "a")) == "a"
    assert child_name(str(folder), f"file://{folder}/a") == "a"
    assert child_name(str(folder), f"{folder}/a/") == "a"
    # the entry itself, never where it leads: removing it removes the link alone
    assert child_name(str(folder), str(folder / "link")) == "link"
    assert child_name(str(folder), str(folder / "sibling")) == "sibling"
    assert child_name(str(folder), str(tmp_path / "calls-too" / "a")) == "a"
    (folder / "b").mkdir()
    (folder / "b" / "up").symlink_to(tmp_path / "victim")
    for elsewhere in (
        str(tmp_path / "victim"),
        str(folder / ".." / "victim"),
        str(folder / "b" / "up" / ".." / "a"),  # its folder is victim's parent
        str(folder / "a" / ".."),
        str(folder),
        str(folder / "a" / "deeper"),
        "s3://bucket/calls/a",
    ):
        assert child_name(str(folder), elsewhere) is None, elsewhere
    assert child_name("s3://bucket/t/calls", "s3://bucket/t/calls/x") == "x"
    for elsewhere in ("s3://bucket/t/calls/../x", "gs://bucket/t/calls/x", "s3://bucket/t/x"):
        assert child_name("s3://bucket/t/calls", elsewhere) is None, elsewhere


def test_an_outcome_json_over_its_bound_is_refused_in_one_line(tmp_path: Path) -> None:
    store = _call(tmp_path, blob, 1, limit=10_000)
    (tmp_path / "call" / "rank-0.json").write_bytes(b" " * (MAX_RECORD_BYTES + 1))
    with pytest.raises(CallFormatError, match=r"rank-0.json: over 1048576 bytes"):
        read_outcome(store, 0)


def test_the_outcome_is_written_before_a_broken_stderr_is_written_to(tmp_path: Path) -> None:
    """The job's stderr is a pipe nobody reads any more: the raise is still recorded."""
    store = _call(tmp_path, fail_at_length, 10, limit=10_000)
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the job's stderr fails (EPIPE)
    try:
        job = _job(tmp_path / "call", stderr=write_end)
    finally:
        os.close(write_end)
    job.wait(timeout=60)
    assert job.returncode != 0
    outcome = read_outcome(store, 0)
    assert outcome is not None and outcome.raised
    with pytest.raises(ValueError, match=r"^m{10}$"):
        outcome.unwrap()
