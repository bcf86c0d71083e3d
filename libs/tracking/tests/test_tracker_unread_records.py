"""What a record FsspecTracker does not read costs a caller: its warning holds none of the
record's bytes, names the caller's own line, says what the skip may change and how to
read the run without it, and reads true when made an error."""

from __future__ import annotations

import compileall
import gc
import inspect
import json
import os
import shutil
import subprocess
import sys
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from torchx.tracker import CorruptRecordError, UnreadRecordWarning
from torchx.tracker.backend.fsspec import create

RUN = "local_cwd://torchx/train-x1"
LONG_RUN = "local_cwd://torchx/" + "long" * 100  # kept under a bounded folder name


def _warnings_of(call: Callable[[], object]) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if isinstance(w.message, UnreadRecordWarning)]


def test_a_kept_warning_holds_none_of_the_bytes_read(tmp_path: Path) -> None:
    """A test runner or ``catch_warnings(record=True)`` keeps every warning: each one must
    not keep the buffer (or parsed record) of the read that skipped the record alive."""
    limit = 1 << 20
    tracker = create(str(tmp_path), max_record_bytes=limit)
    runs = [f"{RUN}-{i}" for i in range(3)]
    filler = "x" * (limit - 100)
    for run in runs:
        tracker.add_metadata(run, lr=0.1)
        tracker.add_metadata(run, note=filler)  # becomes a misshaped record below
    for run_dir in tmp_path.iterdir():
        first, second = sorted(run_dir.glob("metadata/*.json"))
        with first.open("r+b") as f:  # over the limit: a read holds limit + 1 bytes
            f.truncate(4 * limit)
        second.write_text('{"version": 1, "metadata": "' + filler + '"}')  # not an object
        (run_dir / "metadata" / "9.json").write_text("{" + " " * (limit - 100))  # not JSON

    gc.collect()
    tracemalloc.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for run in runs:
                assert tracker.metadata(run) == {}
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(caught) == 3 * len(runs)
    assert held < limit, f"{len(caught)} kept warnings hold {held} bytes"
    assert all(w.message.__traceback__ is None for w in caught)


def test_a_skipped_metadata_record_says_a_key_may_show_an_older_value(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    tracker.add_metadata(RUN, objective=0.9)
    tracker.add_metadata(RUN, objective=0.1)
    newest = max(tmp_path.glob("*/metadata/*.json"))
    newest.write_text("{damaged")

    values: list[object] = []
    [warned] = _warnings_of(lambda: values.append(tracker.metadata(RUN)))
    assert values == [{"objective": 0.9}]  # the older value: the warning says so
    message = str(warned.message)
    assert message.startswith(f"corrupt tracker record at {str(newest)!r} was not read: not valid")
    assert "move the file out of the run's folder (or restore it)" in message
    assert message.endswith("a key this record set may show an older value, or none")

    # made an error, the same words are true: nothing was returned, and nothing skipped
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadRecordWarning)
        with pytest.raises(CorruptRecordError) as raised:
            tracker.metadata(RUN)
    assert str(raised.value) == message
    words = message.split(" was not read: ")[1]
    assert "skipped" not in words and "other records" not in words


def test_a_damaged_run_record_says_what_it_hides_and_how_to_restore_it(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    tracker.add_metadata(LONG_RUN, lr=0.1)
    [run_record] = tmp_path.glob("*/run.json")
    run_record.write_text("[1]")

    listed: list[object] = []
    [warned] = _warnings_of(lambda: listed.append(tracker.run_ids()))
    assert listed == [[]]  # a long id is kept only in its run record
    assert "record anything to the run again (its next write rewrites the file)" in str(
        warned.message
    )
    create(str(tmp_path)).add_metadata(LONG_RUN, epochs=2)  # a new tracker's first write
    assert tracker.run_ids() == [LONG_RUN]


def test_each_read_names_the_callers_line_however_deep_the_record_was_met(
    tmp_path: Path,
) -> None:
    tracker = create(str(tmp_path))
    tracker.add_metadata(RUN, lr=0.1)
    tracker.add_artifact(RUN, "model", "/ckpt/model.pt")
    tracker.add_source("local_cwd://torchx/eval-x2", RUN)
    tracker.add_metadata(LONG_RUN, lr=0.2)
    for path in tmp_path.glob("*/*/*.json"):
        path.write_text("[1]")
    for path in tmp_path.glob("*/run.json"):
        path.write_text("[1]")

    reads: dict[str, Callable[[], object]] = {
        "metadata": lambda: tracker.metadata(RUN),
        "artifacts": lambda: tracker.artifacts(RUN),
        "sources": lambda: tracker.sources("local_cwd://torchx/eval-x2"),
        "run_ids": lambda: tracker.run_ids(),
        "run_ids(experiment=)": lambda: tracker.run_ids(experiment="default"),
        "run_ids(parent_run_id=)": lambda: tracker.run_ids(parent_run_id=RUN),
        "experiments": lambda: tracker.experiments(),
        "lineage": lambda: tracker.lineage(RUN),
    }
    for name, read in reads.items():
        line = inspect.getsourcelines(read)[1]  # each lambda sits on its own line
        found = _warnings_of(read)
        assert found, f"{name} skipped nothing"
        assert {(w.filename, w.lineno) for w in found} == {(__file__, line)}, name


def test_a_source_record_names_the_field_that_is_wrong(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    child = "local_cwd://torchx/eval-x2"
    tracker.add_source(child, RUN, artifact_name="model")
    [record] = tmp_path.glob("*/sources/*.json")
    good = record.read_text()

    record.write_text(good.replace('"model"', "5"))  # a hand edit: the run id stays a str
    [warned] = _warnings_of(lambda: tracker.sources(child))
    assert " was not read: a source's 'artifact_name' must be a str or null, not 5; " in str(
        warned.message
    )
    assert "source_run_id" not in str(warned.message)

    # a damaged record's value may be as large as a record: the warning shows its start
    record.write_text(good.replace('"model"', json.dumps(["x" * 100] * 2000)))
    [warned] = _warnings_of(lambda: tracker.sources(child))
    message = str(warned.message)
    assert "'artifact_name' must be a str or null, not ['xxx" in message
    assert len(message) < 2000 + len(str(record)), len(message)

    record.write_text(good.replace(f'"{RUN}"', "7"))
    [warned] = _warnings_of(lambda: tracker.sources(child))
    assert " was not read: a source needs a str 'source_run_id'; " in str(warned.message)


_CALLER = """
import sys, warnings
from torchx.tracker.backend.fsspec import create
import torchx.tracker._errors as errors
assert errors.__file__.endswith(".pyc"), errors.__file__  # the sourceless copy
tracker = create(sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    tracker.metadata("RUN")  # the line the warning must name
for w in caught:
    print(w.filename, w.lineno)
"""


def test_a_sourceless_install_names_the_callers_line(tmp_path: Path) -> None:
    """Installed as .pyc files only, compiled under another folder (an app bundle), the
    code's file names are not where it lives: the warning still names the caller."""
    here = Path(__file__).parent.parent / "src" / "torchx"
    site = tmp_path / "site"
    shutil.copytree(here, site / "torchx", ignore=shutil.ignore_patterns("__pycache__"))
    assert compileall.compile_dir(site, ddir="/build/site-packages", legacy=True, quiet=1)
    for source in site.rglob("*.py"):
        source.unlink()
    root = tmp_path / "runs"
    tracker = create(str(root))
    tracker.add_metadata("RUN", lr=0.1)
    tracker.add_metadata("RUN", lr=0.2)
    max(root.glob("*/metadata/*.json")).write_text("{damaged")
    caller = tmp_path / "caller.py"
    caller.write_text(_CALLER)
    [line] = [n for n, text in enumerate(_CALLER.splitlines(), 1) if "must name" in text]
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, str(caller), str(root)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(caller), str(line)]
