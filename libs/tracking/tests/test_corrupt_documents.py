"""A damaged or foreign document is reported with its path, not as a JSON traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from torchx.runtime.tracking import CorruptResultError, FsspecResultTracker

if TYPE_CHECKING:
    from conftest import Backend

CORRUPT: list[tuple[bytes, str]] = [
    (b"", "empty file"),
    (b"   \n", "empty file"),
    (b'{"accuracy": 0.2', "not valid JSON (Expecting ',' delimiter: line 1 column 17"),
    (b"accuracy=0.2", "not valid JSON (Expecting value: line 1 column 1"),
    (b"\xff\xfe{}", "not UTF-8 text (invalid start byte at byte 0)"),
    (b"[1, 2]", "expected a JSON object of results, found an array"),
    (b'"text"', "expected a JSON object of results, found a string"),
    (b"null", "expected a JSON object of results, found null"),
    (b'{"l2norm": {"mean": 1}}', "field 'l2norm' holds an object; results are numbers and strings"),
    (b'{"flag": true}', "field 'flag' holds a boolean"),
    (b'{"loss": null}', "field 'loss' holds null"),
    (b'{"xs": [1]}', "field 'xs' holds an array"),
    (b'{"loss": NaN}', "holds NaN, which strict JSON does not allow"),
    (b'{"loss": -Infinity}', "holds -Infinity, which strict JSON does not allow"),
    (b'{"n": ' + b"7" * 5000 + b"}", "not a readable document (Exceeds the limit"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
]


def test_corrupt_document_error_names_its_path(backend: Backend, subtests: pytest.Subtests) -> None:
    tracker = backend.tracker()
    path = tracker.path_of("run/out")
    tracker.fs.makedirs(path.rpartition("/")[0], exist_ok=True)
    for data, reason in CORRUPT:
        with subtests.test(data=repr(data)[:24]):
            check_reported(tracker, path, data, reason)


def check_reported(tracker: FsspecResultTracker, path: str, data: bytes, reason: str) -> None:
    tracker.fs.pipe_file(path, data)
    for read in (lambda: tracker["run/out"], lambda: tracker.get("run/out")):
        with pytest.raises(CorruptResultError) as caught:
            read()
        assert str(caught.value).startswith(f"corrupt result document at {path!r}: ")
        assert reason in str(caught.value)
        assert caught.value.path == path
        error = caught.value
        assert error.__cause__ is None  # no chained JSON traceback
        assert error.__context__ is None or error.__suppress_context__
    assert "run/out" in tracker  # it exists; it is just not readable
    tracker["run/out"] = {"accuracy": 0.9}  # and a put repairs it
    assert tracker["run/out"] == {"accuracy": 0.9}


def test_folder_where_a_document_should_be_is_reported(tmp_path: object) -> None:
    from pathlib import Path

    tracker = FsspecResultTracker(str(tmp_path))
    (Path(str(tmp_path)) / "k.json").mkdir()
    with pytest.raises(CorruptResultError, match="it is a folder, not a document"):
        tracker["k"]
    assert "k" not in tracker
