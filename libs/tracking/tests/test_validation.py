"""Bad keys and bad values: a clear error naming what is wrong, and nothing written."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from torchx.runtime.tracking import (
    MAX_DOCUMENT_BYTES,
    MAX_KEY_BYTES,
    MAX_SEGMENT_BYTES,
    MAX_STR_BYTES,
    CorruptResultError,
    FsspecResultTracker,
    InvalidKeyError,
    InvalidResultError,
    ResultTooLargeError,
    TrackerError,
)

if TYPE_CHECKING:
    from conftest import Backend

BAD_KEYS: list[tuple[object, str]] = [
    # int keys are stored under their decimal text: the same length rules apply
    (10**250, "each '/'-separated part is at most 200 bytes in UTF-8, part '1000"),
    (10**5000, "this int has more digits"),
    (-(10**3000), "this int has more digits"),
    ("", "must not be empty"),
    ("..", "must not have '..' parts; keys cannot leave the tracker base"),
    ("../escape", "must not have '..' parts"),
    ("a/../../escape", "must not have '..' parts"),
    ("a/..", "must not have '..' parts"),
    ("./a", "must not have '.' parts"),
    ("/etc/passwd", "relative to the tracker base, not absolute"),
    ("/", "relative to the tracker base, not absolute"),
    ("a//b", "must not have empty parts"),
    ("a/", "must not have empty parts"),
    ("s3://bucket/x", "must not have empty parts"),
    ("a\\b", "must not contain a backslash"),
    ("..\\..\\x", "must not contain a backslash"),
    ("a\x00b", "must not contain a NUL character"),
    ("a\nb", "must not contain control characters"),
    ("a\x7fb", "must not contain control characters"),
    (".hidden", "reserved for temporary files"),
    ("a/.x.json.abc.tmp", "reserved for temporary files"),
    ("x" * (MAX_KEY_BYTES + 1), f"at most {MAX_KEY_BYTES} bytes in UTF-8, this one is 1025"),
    ("/".join(["é" * 50] * 11), f"at most {MAX_KEY_BYTES} bytes"),  # 1110 bytes
    ("y" * (MAX_SEGMENT_BYTES + 1), f"at most {MAX_SEGMENT_BYTES} bytes in UTF-8"),
    ("\ud800", "encodable as UTF-8"),
    ("r.json/x", "must not end in '.json'"),
    (1.5, "keys are int or str, got float"),
    (True, "keys are int or str, got bool"),
    (None, "keys are int or str, got NoneType"),
    (b"bytes", "keys are int or str, got bytes"),
    (("a", "b"), "keys are int or str, got tuple"),
]


# The cases of one table run as subtests of one test per backend: each backend then
# starts once (an S3 bucket per test is the slow part), and each case still reports.


def _label(key: object) -> str:
    if isinstance(key, int) and key.bit_length() > 256:
        return f"<int of {key.bit_length()} bits>"  # repr of the largest would fail
    return repr(key)[:30]


def test_bad_key_is_refused_everywhere_and_nothing_is_written(
    backend: Backend, subtests: pytest.Subtests
) -> None:
    tracker = backend.tracker()
    for key, reason in BAD_KEYS:
        with subtests.test(key=_label(key)):
            operations = [
                lambda key=key: tracker.put(key, v=1),
                lambda key=key: tracker.__setitem__(key, {"v": 1}),
                lambda key=key: tracker[key],
                lambda key=key: tracker.get(key),
                lambda key=key: key in tracker,
                lambda key=key: tracker.path_of(key),
            ]
            for operation in operations:
                with pytest.raises(InvalidKeyError) as caught:
                    operation()
                message = str(caught.value)
                shown = _label(key) if isinstance(key, int) else repr(key)
                assert message.startswith(f"invalid tracker key {shown}: ")
                assert reason in message
                assert caught.value.key == key
                assert isinstance(caught.value, ValueError)
    assert list(tracker) == []
    assert tracker.fs.find(tracker.path_of("probe").rpartition("/")[0]) == []


GOOD_KEYS: list[tuple[object, str]] = [
    (0, "0"),
    (-3, "-3"),
    (2**64, str(2**64)),
    ("a b", "a b"),
    ("trial:3/rank-0", "trial:3/rank-0"),
    ("ключ/値", "ключ/値"),
    ("x.json", "x.json"),
    ("a..b", "a..b"),
    ("x" * MAX_SEGMENT_BYTES, "x" * MAX_SEGMENT_BYTES),
    ("/".join(["x" * 200] * 5) + "/yyyy", "/".join(["x" * 200] * 5) + "/yyyy"),  # 1024 bytes
]


def test_unusual_but_safe_keys_work(backend: Backend, subtests: pytest.Subtests) -> None:
    for case, (key, name) in enumerate(GOOD_KEYS):
        with subtests.test(key=repr(key)[:30]):
            tracker = FsspecResultTracker(f"{backend.base}/case{case}", **backend.storage_options)
            tracker[key] = {"v": 1}
            assert tracker[key] == {"v": 1}
            assert list(tracker) == [name]


class Color(enum.IntEnum):
    RED = 1


class Tag(str, enum.Enum):
    BEST = "best"


class Ratio(float):
    pass


class Count(int):
    pass


def test_value_subclasses_are_stored_as_plain_values(backend: Backend) -> None:
    tracker = backend.tracker()
    big = 2**3300 - 1
    tracker["k"] = {"color": Color.RED, "tag": Tag.BEST, "ratio": Ratio(0.5), "big": big}
    back = tracker["k"]
    assert back == {"color": 1, "tag": "best", "ratio": 0.5, "big": big}
    assert [type(v) for v in back.values()] == [int, str, float, int]


def test_str_limit_is_measured_in_utf8_bytes(backend: Backend) -> None:
    tracker = backend.tracker()
    at_limit = {"ascii": "a" * MAX_STR_BYTES, "accents": "é" * (MAX_STR_BYTES // 2)}
    tracker["k"] = at_limit
    assert tracker["k"] == at_limit
    with pytest.raises(InvalidResultError, match="is 1026"):
        tracker["k"] = {"accents": "é" * (MAX_STR_BYTES // 2 + 1)}  # 513 chars, 1026 bytes
    assert tracker["k"] == at_limit


BAD_VALUES: list[tuple[object, str]] = [
    (float("nan"), "nan is not stored (documents are strict JSON, which has no NaN or infinity)"),
    (float("inf"), "inf is not stored"),
    (float("-inf"), "-inf is not stored"),
    (True, "bool True is not accepted; store int(True) or a str"),
    (b"abc", "values must be int, float or str, got bytes; decode it to str first"),
    (bytearray(b"a"), "got bytearray; decode it to str first"),
    ({"mean": 1.0}, "got dict; flatten it into several fields, e.g. 'l2norm/mean'"),
    ([1, 2], "got list; store each item as its own field"),
    ((1, 2), "got tuple; store each item as its own field"),
    (None, "got NoneType; leave the field out instead"),
    (1 + 2j, "values must be int, float or str, got complex"),
    (object(), "values must be int, float or str, got object"),
    (
        "x" * (MAX_STR_BYTES + 1),
        f"str values are at most {MAX_STR_BYTES} bytes in UTF-8, this one is 1025",
    ),
    ("\udcff", "str values must be encodable as UTF-8"),
    (2**3300, "ints must be below 2**3300 in magnitude (about 990 decimal digits)"),
    (-(2**3300), "this one has 3301 bits"),
    (Count(10**1000), "ints must be below 2**3300"),
]


def test_bad_value_names_key_and_field_and_writes_nothing(
    backend: Backend, subtests: pytest.Subtests
) -> None:
    tracker = backend.tracker()
    tracker["kept"] = {"accuracy": 0.5}
    for value, reason in BAD_VALUES:
        with subtests.test(value=repr(value)[:20]):
            for write in (
                lambda key, value=value: tracker.put(key, ok=1, bad=value),
                lambda key, value=value: tracker.__setitem__(key, {"ok": 1, "bad": value}),
            ):
                for key in ("fresh", "kept"):
                    with pytest.raises(InvalidResultError) as caught:
                        write(key)
                    message = str(caught.value)
                    assert message.startswith(f"invalid result for field 'bad' of key {key!r}: ")
                    assert reason in message
                    assert message.endswith("; nothing was written")
                    assert (caught.value.key, caught.value.field) == (key, "bad")
    assert list(tracker) == ["kept"]
    assert tracker["kept"] == {"accuracy": 0.5}


@pytest.mark.parametrize(
    ("results", "reason"),
    [
        ([("a", 1)], "results must be a mapping of field names to int, float or str, got list"),
        (3, "results must be a mapping of field names to int, float or str, got int"),
        ({1: 2}, "field names must be non-empty str, got 1"),
        ({"": 2}, "field names must be non-empty str, got ''"),
    ],
)
def test_bad_results_container_is_refused(tmp_path: Path, results: object, reason: str) -> None:
    tracker = FsspecResultTracker(str(tmp_path))
    with pytest.raises(InvalidResultError) as caught:
        tracker["k"] = results  # type: ignore[assignment]
    assert str(caught.value) == f"invalid result for key 'k': {reason}; nothing was written"
    assert "k" not in tracker
    assert list(tmp_path.iterdir()) == []


def test_a_base_of_an_unknown_protocol_is_one_line_naming_it() -> None:
    with pytest.raises(ValueError) as caught:
        FsspecResultTracker("nosuch://bucket/results")
    (line,) = str(caught.value).splitlines()
    assert line.startswith("tracker_base 'nosuch://bucket/results': Protocol not known: nosuch;")


def test_a_base_that_cannot_be_written_names_the_key_and_base_and_keeps_the_file(
    tmp_path: Path,
) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("keep me")
    tracker = FsspecResultTracker(str(a_file / "results"))
    with pytest.raises(NotADirectoryError) as caught:
        tracker.put("out", accuracy=0.5)
    (line,) = str(caught.value).splitlines()
    assert f"cannot store results for key 'out' in tracker base '{a_file}/results'" in line
    assert ".tmp" not in line
    assert a_file.read_text() == "keep me"


def test_a_put_over_the_document_limit_is_refused_and_keeps_the_previous_results(
    tmp_path: Path,
) -> None:
    tracker = FsspecResultTracker(str(tmp_path))
    tracker.put("k", accuracy=0.5)
    fields = MAX_DOCUMENT_BYTES // 1000 + 1  # each field writes over 1000 bytes
    with pytest.raises(InvalidResultError) as caught:
        tracker["k"] = {f"f{i}": "x" * 1000 for i in range(fields)}
    (line,) = str(caught.value).splitlines()
    assert line.startswith("invalid result for key 'k': its document would be ")
    assert f"over MAX_DOCUMENT_BYTES ({MAX_DOCUMENT_BYTES})" in line
    assert tracker["k"] == {"accuracy": 0.5}


@pytest.mark.parametrize("base", ["local", "memory"])
def test_reading_a_huge_file_at_a_keys_path_holds_at_most_the_limit(
    tmp_path: Path, base: str
) -> None:
    import tracemalloc

    size = 4 * MAX_DOCUMENT_BYTES
    if base == "local":
        tracker = FsspecResultTracker(str(tmp_path))
        with open(tmp_path / "big.json", "wb") as f:
            f.truncate(size)  # sparse: no disk is spent on it
    else:
        tracker = FsspecResultTracker(f"memory://{tmp_path.name}/huge")
        tracker.fs.pipe_file(tracker.path_of("big"), bytes(size))
    tracemalloc.start()
    try:
        with pytest.raises(CorruptResultError) as caught:
            tracker["big"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert type(caught.value) is ResultTooLargeError and "corrupt" not in message
    assert f"it is {size} bytes, over the read limit MAX_DOCUMENT_BYTES ({MAX_DOCUMENT_BYTES})" in (
        message
    )
    assert repr(tracker.path_of("big")) in message and "read it with fsspec" in message
    assert "not written by this tracker" not in message
    assert peak < 3 * MAX_DOCUMENT_BYTES, f"reading held {peak} bytes"
    if base == "memory":
        tracker.fs.rm_file(tracker.path_of("big"))


def test_a_document_over_a_lower_read_limit_says_how_to_read_it(tmp_path: Path) -> None:
    import tracemalloc

    FsspecResultTracker(str(tmp_path))["k"] = {"x": "y" * 1000}  # written with no lower limit
    size = (tmp_path / "k.json").stat().st_size
    with pytest.raises(ResultTooLargeError) as caught:
        FsspecResultTracker(str(tmp_path), max_document_bytes=500)["k"]
    (line,) = str(caught.value).splitlines()
    # an intact document over the limit is not called corrupt ...
    assert "corrupt" not in line
    assert line.startswith(
        f"result document at {str(tmp_path / 'k.json')!r} is too large to read: "
        f"it is {size} bytes, over the read limit max_document_bytes (500); it was not read"
    )
    assert line.endswith(
        "pass FsspecResultTracker(..., max_document_bytes=N) with N at least its size,"
        " or read it with fsspec at that path"
    )
    error = caught.value
    assert (error.path, error.size, error.limit) == (str(tmp_path / "k.json"), size, 500)
    # ... yet code written for CorruptResultError (or TrackerError, ValueError) catches it
    assert isinstance(error, CorruptResultError) and isinstance(error, TrackerError)
    assert isinstance(error, ValueError)
    # while a document that does not parse still is corrupt
    (tmp_path / "torn.json").write_text('{"x": ')
    with pytest.raises(CorruptResultError) as torn:
        FsspecResultTracker(str(tmp_path), max_document_bytes=500)["torn"]
    assert type(torn.value) is CorruptResultError
    assert str(torn.value).startswith(f"corrupt result document at {str(tmp_path / 'torn.json')!r}")
    # a caller that raises the limit reads it through the API
    assert FsspecResultTracker(str(tmp_path), max_document_bytes=size)["k"] == {"x": "y" * 1000}
    # ... and a put is held to the tracker's limit as well
    with pytest.raises(InvalidResultError, match=r"over max_document_bytes \(500\)"):
        FsspecResultTracker(str(tmp_path), max_document_bytes=500)["k"] = {"x": "y" * 1000}
    # the memory a get holds follows the limit given, not the file's size
    limit = 1024 * 1024
    with open(tmp_path / "big.json", "wb") as f:
        f.truncate(64 * limit)  # sparse: no disk is spent on it
    tracemalloc.start()
    try:
        with pytest.raises(CorruptResultError):
            FsspecResultTracker(str(tmp_path), max_document_bytes=limit)["big"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * limit, f"reading held {peak} bytes"


@pytest.mark.parametrize("limit", [0, -1, True, "16", 1.5])
def test_a_max_document_bytes_that_is_not_a_positive_count_is_named(
    tmp_path: Path, limit: object
) -> None:
    with pytest.raises(ValueError, match=rf"^max_document_bytes must be .* got {limit!r}$"):
        FsspecResultTracker(str(tmp_path), max_document_bytes=limit)  # type: ignore[arg-type]
