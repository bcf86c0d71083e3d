"""The tracker's errors share one base, TrackerError, and stay ValueErrors."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import pytest

import torchx.tracker as tracker_pkg
from torchx.tracker import (
    CorruptRecordError,
    InvalidRecordError,
    TrackerConfigError,
    TrackerError,
    UnreadRecordWarning,
)
from torchx.tracker.backend.fsspec import create


def test_the_base_is_public_and_every_tracker_error_derives_from_it() -> None:
    assert "TrackerError" in tracker_pkg.__all__
    assert TrackerError.__module__ == "torchx.tracker"
    assert issubclass(TrackerError, ValueError)
    for error in (TrackerConfigError, InvalidRecordError, CorruptRecordError):
        assert issubclass(error, TrackerError)


def test_one_except_clause_catches_each_of_them(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    with pytest.raises(TrackerError, match="nothing was written"):
        tracker.add_metadata("run", value=object())
    with pytest.raises(TrackerError, match="fsspec tracker config"):
        create("")
    tracker.add_metadata("run", lr=0.1)
    [record] = tmp_path.glob("*/metadata/*.json")
    record.write_text("[]")
    with warnings.catch_warnings():  # a damaged record is skipped unless this asks otherwise
        warnings.simplefilter("error", UnreadRecordWarning)
        with pytest.raises(TrackerError, match="corrupt tracker record"):
            tracker.metadata("run")


def test_the_errors_survive_a_process_boundary() -> None:
    error = InvalidRecordError("metadata['x']", 1j, "use a float")
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, TrackerError) and str(again) == str(error)


def test_an_intact_record_refused_keeps_its_class_and_is_not_called_corrupt() -> None:
    error = CorruptRecordError("/runs/r.json", "is too large to read (9 bytes, limit 5)", False)
    assert str(error) == "tracker record at '/runs/r.json' is too large to read (9 bytes, limit 5)"
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is CorruptRecordError and str(again) == str(error) and not again.damaged
    assert str(CorruptRecordError("/r", "bad")) == "corrupt tracker record at '/r': bad"


def test_a_skipped_record_is_a_warning_that_survives_a_process_boundary() -> None:
    warning = UnreadRecordWarning("/runs/r.json", "it is 9 bytes, over the read limit", False)
    assert isinstance(warning, UserWarning) and isinstance(warning, CorruptRecordError)
    assert UnreadRecordWarning.__module__ == "torchx.tracker"
    again = pickle.loads(pickle.dumps(warning))
    assert type(again) is UnreadRecordWarning and str(again) == str(warning)
    assert str(again) == (
        "tracker record at '/runs/r.json' was not read: it is 9 bytes, over the read limit"
    )


def test_a_refused_value_is_shown_by_its_start_however_large(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    huge = {"x" * 100: list(range(100_000))}
    for call in (
        lambda: tracker.add_metadata("run", ids=set(range(100_000))),  # not JSON data
        lambda: tracker.add_artifact("run", "model", "/m.pt", metadata=[huge]),  # not a dict
        lambda: tracker.add_source("run", ["r" * 1000] * 1000),  # not a str
    ):
        with pytest.raises(InvalidRecordError) as caught:
            call()
        message = str(caught.value)
        assert ": got " in message and len(message) < 2000, message[:3000]
        assert message.endswith("nothing was written"), message[-200:]
    assert not list(tmp_path.glob("*/*/*.json"))  # nothing was written
    short = "s3://bucket/" + "runs/" * 60  # 312 characters: shown whole
    assert repr(short) in str(InvalidRecordError("path", short, "fix it"))
    # small containers, long ints and nesting show whole as well: only size cuts them
    for whole in (list("abcdefghij"), {f"k{i}": i for i in range(8)}, 2**200, [[[1]]]):
        assert repr(whole) in str(InvalidRecordError("options", whole, "fix it"))
    # a small object whose full repr is huge (10**8 values): the work is capped, not only
    # the text; rendering it whole before the cut would not end within the test timeout
    wide = [[[[0] * 100] * 100] * 100] * 100
    assert len(str(InvalidRecordError("options", wide, "fix it"))) < 600
