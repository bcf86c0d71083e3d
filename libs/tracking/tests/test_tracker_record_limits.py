"""FsspecTracker bounds what it reads and writes: a huge or damaged record file costs a
read of at most ``max_record_bytes`` + 1 bytes and one line naming it, never memory that
grows with the file, and no record already written is lost."""

from __future__ import annotations

import re
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import fsspec  # type: ignore[import-untyped]
import pytest

from torchx.tracker import (
    CorruptRecordError,
    InvalidRecordError,
    TrackerConfigError,
    TrackerDescendant,
    TrackerSource,
    UnreadRecordWarning,
    build_trackers,
)
from torchx.tracker.backend.fsspec import FsspecTracker, create

RUN = "local_cwd://torchx/train-x1"
_R = TypeVar("_R")


def _only_record(root: Path, category: str) -> Path:
    [path] = root.glob(f"*/{category}/*.json")
    return path


def _refusal_and_peak_memory(
    expected: type[Exception], call: Callable[[], object]
) -> tuple[Exception, int]:
    """The error ``call`` raises (it must be ``expected``) and the most memory Python held
    at once meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises(expected) as caught:
            call()
        return caught.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _skipped(call: Callable[[], _R]) -> tuple[_R, UnreadRecordWarning]:
    """What ``call`` returns, and the one record it skipped (it must skip one)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    [skipped] = [w.message for w in caught if isinstance(w.message, UnreadRecordWarning)]
    return result, skipped


def test_a_huge_record_file_is_skipped_after_reading_at_most_the_limit(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    tracker.add_metadata(RUN, note="huge")
    tracker.add_metadata(RUN, lr=0.1)  # written later: its record sorts after the huge one
    tracker.add_artifact(RUN, "model", "/ckpt/model.pt")
    record = min(tmp_path.glob("*/metadata/*.json"))
    with record.open("r+b") as f:  # 1 GiB, sparse: costs no disk, would cost 1 GiB to hold
        f.truncate(1 << 30)

    reader = FsspecTracker(tracker.fs, str(tmp_path), max_record_bytes=4096)
    tracemalloc.start()
    try:
        metadata, skipped = _skipped(lambda: reader.metadata(RUN))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"reading a 1 GiB record held {peak} bytes at its peak"
    # the run's other records are read; the one over the limit is named, not lost
    assert metadata == {"lr": 0.1}
    message = str(skipped)
    assert "\n" not in message and "corrupt" not in message
    assert message.startswith(
        f"tracker record at {str(record)!r} was not read: it is"
        f" {1 << 30} bytes, over the read limit max_record_bytes (4096); to read it, pass"
        " FsspecTracker(fs, root_dir, max_record_bytes=N) with N at least its size"
    )
    assert (skipped.path, skipped.damaged) == (str(record), False)
    # a caller who wants the old all-or-nothing read makes the warning an error
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadRecordWarning)
        with pytest.raises(CorruptRecordError, match="was not read"):
            reader.metadata(RUN)
    assert record.stat().st_size == 1 << 30  # the file is left as it was
    assert tracker.artifacts(RUN)["model"].path == "/ckpt/model.pt"


def test_one_record_over_the_limit_costs_every_read_that_record_only(tmp_path: Path) -> None:
    """Artifacts, sources, lineage and the listings of runs and experiments skip the one
    record and keep the rest, whichever record it is."""
    parent, child, other = RUN, "local_cwd://torchx/eval-x2", "local_cwd://torchx/eval-x3"
    tracker = create(str(tmp_path))
    tracker.add_artifact(parent, "model", "/ckpt/model.pt")
    tracker.add_artifact(parent, "big", "/ckpt/" + "x" * 500)
    tracker.add_source(child, parent, "model")
    tracker.add_source(other, parent, "b" * 500)
    small = create(str(tmp_path), max_record_bytes=300)

    artifacts, skipped = _skipped(lambda: small.artifacts(parent))
    assert list(artifacts) == ["model"] and "/artifacts/" in skipped.path
    sources, skipped = _skipped(lambda: small.sources(other))
    assert sources == [] and "/sources/" in skipped.path
    assert small.sources(child) == [TrackerSource(parent, "model")]
    lineage, skipped = _skipped(lambda: small.lineage(parent))
    assert lineage.descendants == [TrackerDescendant(child, "model")]
    children, _ = _skipped(lambda: small.run_ids(parent_run_id=parent))
    assert children == [child]

    # a run's own record over the limit: the run is left out of its experiment's listing
    tracker.add_metadata("local_cwd://torchx/" + "long" * 100, lr=1)  # a bounded folder name
    assert create(str(tmp_path)).experiments() == ["default"]
    names, skipped = _skipped(lambda: create(str(tmp_path), max_record_bytes=100).experiments())
    assert names == ["default"] and skipped.path.endswith("/run.json")
    assert "max_record_bytes (100)" in str(skipped)


def test_the_default_limit_is_named_and_raising_it_reads_the_record(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    tracker.add_metadata(RUN, note="x" * 5000)
    metadata, skipped = _skipped(
        lambda: FsspecTracker(tracker.fs, str(tmp_path), max_record_bytes=100).metadata(RUN)
    )
    assert metadata == {}
    assert re.search(r"it is \d+ bytes, over the read limit max_record_bytes \(100\)", str(skipped))
    assert tracker.max_record_bytes == 16 * 1024 * 1024
    assert FsspecTracker(tracker.fs, str(tmp_path), max_record_bytes=5100).metadata(RUN) == {
        "note": "x" * 5000
    }
    huge = tmp_path / "huge"
    big = create(str(huge), max_record_bytes=1 << 25)
    big.add_metadata(RUN, note="x" * (16 << 20))
    _, skipped = _skipped(lambda: create(str(huge)).metadata(RUN))
    assert "over the read limit MAX_RECORD_BYTES (16777216)" in str(skipped)


def test_a_record_over_the_limit_is_refused_before_anything_is_written() -> None:
    fs = fsspec.filesystem("memory")
    root = "/record-limits-write"
    tracker = FsspecTracker(fs, root, max_record_bytes=200)
    with pytest.raises(InvalidRecordError) as caught:
        tracker.add_metadata(RUN, note="x" * 500)
    message = str(caught.value)
    assert "\n" not in message and "metadata record (bytes of JSON)" in message
    assert "at most max_record_bytes (200) bytes" in message
    assert message.endswith("nothing was written")
    assert not fs.exists(root)  # not even the run's own record
    tracker.add_metadata(RUN, note="short")
    assert tracker.metadata(RUN) == {"note": "short"}


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "10"])
def test_max_record_bytes_must_be_a_positive_whole_number(value: object) -> None:
    with pytest.raises(TrackerConfigError, match="max_record_bytes: got"):
        FsspecTracker(fsspec.filesystem("memory"), "/x", max_record_bytes=value)  # type: ignore[arg-type]


def test_a_huge_options_file_is_refused_in_one_line(tmp_path: Path) -> None:
    options = tmp_path / "tracker.conf"
    with options.open("wb") as f:
        f.write(b"protocol=file\nroot_path=/tmp/x\n")
        f.truncate(1 << 30)
    error, peak = _refusal_and_peak_memory(TrackerConfigError, lambda: create(str(options)))
    assert peak < 8 << 20, f"reading a 1 GiB options file held {peak} bytes at its peak"
    assert str(error) == (
        f"fsspec tracker config: got {str(options)!r}; {options} holds {1 << 30} bytes; a"
        " tracker's config file holds at most MAX_OPTIONS_FILE_BYTES (1048576) bytes; give the"
        " URL of the runs' folder, or of an options file of protocol=... and root_path=... lines"
    )


def test_an_options_file_reads_as_the_mlflow_config_does(tmp_path: Path) -> None:
    """One reader for both trackers' config files: an editor's byte-order mark reads, and
    a file that is not UTF-8 is one line naming it."""
    options = tmp_path / "tracker.conf"
    options.write_bytes(f"\ufeffprotocol=file\nroot_path={tmp_path / 'runs'}\n".encode())
    assert create(str(options)).root_dir == str(tmp_path / "runs")
    options.write_bytes(b"protocol=file\nroot_path=/tmp/\xff\n")
    with pytest.raises(TrackerConfigError) as caught:
        create(str(options))
    message = str(caught.value)
    assert message.startswith(
        f"fsspec tracker config: got {str(options)!r}; {options} is not UTF-8 text ("
    )
    assert "\n" not in message and "byte 0xff in position 29" in message


def test_create_takes_the_limit_and_its_error_says_how_to_raise_it(tmp_path: Path) -> None:
    """What the error of a record over the limit says works from where the tracker was
    made: create's keyword, or (.torchxconfig and the CLI give a config URL only) an
    options file with a max_record_bytes= line."""
    runs = tmp_path / "runs"
    create(str(runs)).add_metadata(RUN, note="x" * 5000)
    _, skipped = _skipped(lambda: create(str(runs), max_record_bytes=100).metadata(RUN))
    message = str(skipped)
    assert "\n" not in message
    assert f"pass create({str(runs)!r}, max_record_bytes=N) (from .torchxconfig" in message
    assert f"protocol=file, root_path={runs} and max_record_bytes=N lines" in message
    assert create(str(runs), max_record_bytes=5100).metadata(RUN) == {"note": "x" * 5000}

    options = tmp_path / "tracker.conf"
    options.write_text(f"protocol=file\nroot_path={runs}\nmax_record_bytes=100\n")
    _, skipped = _skipped(lambda: build_trackers({"fsspec": str(options)})[0].metadata(RUN))
    # as the CLI makes it
    assert f"set max_record_bytes=N in the options file {options} with N at least" in str(skipped)
    options.write_text(f"protocol=file\nroot_path={runs}\nmax_record_bytes=5100\n")
    [tracker] = build_trackers({"fsspec": str(options)})
    assert tracker.metadata(RUN) == {"note": "x" * 5000}
    # create's keyword wins over the file's line
    assert create(str(options), max_record_bytes=100).max_record_bytes == 100


def test_a_misspelt_or_bad_limit_given_to_create_is_named(tmp_path: Path) -> None:
    with pytest.raises(TrackerConfigError, match=r"did you mean 'max_record_bytes'\?"):
        create(str(tmp_path / "runs"), max_record_byte=1 << 26)
    with pytest.raises(TrackerConfigError, match=r"max_record_bytes: got 0; give a whole"):
        create(str(tmp_path / "runs"), max_record_bytes=0)
    options = tmp_path / "tracker.conf"
    options.write_text(f"protocol=file\nroot_path={tmp_path / 'runs'}\nmax_record_byte=9\n")
    with pytest.raises(TrackerConfigError, match=r"did you mean 'max_record_bytes'\?"):
        create(str(options))
    options.write_text(f"protocol=file\nroot_path={tmp_path / 'runs'}\nmax_record_bytes=64M\n")
    with pytest.raises(TrackerConfigError) as caught:
        create(str(options))
    assert f"options file {options}: max_record_bytes: got '64M'; give a whole" in str(caught.value)
    assert not (tmp_path / "runs").exists()  # refused before its folder was made


def test_a_size_that_does_not_show_the_file_over_the_limit_is_not_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file read as over the limit, whose size the store then gives as 0 (a device), as
    no more than the limit (it shrank since) or not at all: the config files, the records
    and the result documents say only that it is over, and say it once."""
    from torchx.runtime.tracking import ResultTooLargeError
    from torchx.runtime.tracking._errors import over_limit_text
    from torchx.runtime.tracking._stores import DocumentStore

    assert over_limit_text(9000, 500) == "9000 bytes"
    assert "it is 9000 bytes, over the read limit max_document_bytes (500); it was not" in str(
        ResultTooLargeError("/p/k.json", 9000, 500)
    )
    for size in (None, 0, 400, 500):
        assert over_limit_text(size, 500) == "over 500 bytes"  # "<path> holds over 500 bytes"
        text = str(ResultTooLargeError("/p/k.json", size, 500))
        assert "it is over the read limit max_document_bytes (500); it was not read" in text
        assert "over 500 bytes" not in text
    tracker = create(str(tmp_path))
    tracker.add_metadata(RUN, note="x" * 5000)
    monkeypatch.setattr(DocumentStore, "size", lambda self, path: None)
    _, skipped = _skipped(lambda: create(str(tmp_path), max_record_bytes=100).metadata(RUN))
    assert "was not read: it is over the read limit max_record_bytes (100); to read it" in str(
        skipped
    )
