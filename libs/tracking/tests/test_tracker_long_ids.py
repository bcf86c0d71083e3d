"""Ids of any length and characters: each maps to a bounded file name, and reads back."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from torchx.tracker import TrackerSource
from torchx.tracker.backend.fsspec import FsspecTracker, create

if TYPE_CHECKING:
    from conftest import Backend

# past 145 bytes the base32 names of the old layout were too long for a file name
LONG_RUN = "local_cwd://torchx/" + "sweep-trial-" * 30 + "ü/x\\y:z"
LONG_PARENT = "s3://bucket/" + "p" * 400
LONG_ARTIFACT = "checkpoint-" * 40
SHORT = "local_cwd://torchx/train-x1"


@pytest.fixture
def tracker(backend: Backend) -> FsspecTracker:
    return create(backend.base, **backend.storage_options)


def test_long_run_parent_and_artifact_ids_round_trip(tracker: FsspecTracker) -> None:
    tracker.add_metadata(LONG_RUN, lr=0.1)
    tracker.add_artifact(LONG_RUN, LONG_ARTIFACT, "/ckpt", {"epoch": 1})
    tracker.add_source(LONG_RUN, LONG_PARENT)
    tracker.add_source(LONG_RUN, LONG_PARENT)  # a second replica: still one record
    tracker.add_source(LONG_RUN, LONG_PARENT, artifact_name=LONG_ARTIFACT)
    tracker.add_metadata(LONG_PARENT, seed=3)
    assert tracker.metadata(LONG_RUN) == {"lr": 0.1}
    assert list(tracker.artifacts(LONG_RUN)) == [LONG_ARTIFACT]
    assert sorted(tracker.sources(LONG_RUN), key=lambda s: s.artifact_name or "") == [
        TrackerSource(LONG_PARENT, None),
        TrackerSource(LONG_PARENT, LONG_ARTIFACT),
    ]
    assert tracker.run_ids() == sorted([LONG_RUN, LONG_PARENT])
    assert tracker.run_ids(parent_run_id=LONG_PARENT) == [LONG_RUN]
    lineage = tracker.lineage(LONG_PARENT)
    assert lineage.sources == [] and {d.run_id for d in lineage.descendants} == {LONG_RUN}
    assert tracker.experiments() == ["default"]


def test_every_name_on_disk_is_bounded_and_shows_the_ids_start(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    tracker.add_source(LONG_RUN, LONG_PARENT, artifact_name=LONG_ARTIFACT)
    tracker.add_metadata(LONG_RUN, lr=0.1)
    names = [name for _, dirs, files in os.walk(tmp_path) for name in [*dirs, *files]]
    assert names and max(len(n.encode()) for n in names) <= 255
    [run_folder] = [p.name for p in tmp_path.iterdir()]
    assert run_folder.startswith("local_cwd_torchx_sweep-trial-")


def test_ids_that_differ_only_past_the_prefix_keep_apart(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    a, b = LONG_PARENT + "a", LONG_PARENT + "b"
    tracker.add_metadata(a, which="a")
    tracker.add_metadata(b, which="b")
    assert tracker.metadata(a) == {"which": "a"} and tracker.metadata(b) == {"which": "b"}
    assert tracker.run_ids() == [a, b]


def test_short_ids_keep_the_folders_earlier_versions_wrote(tmp_path: Path) -> None:
    # the layout as earlier versions wrote it, by hand: base32 folder, version-1 records
    old = tmp_path / base64.b32encode(SHORT.encode()).decode().rstrip("=")
    (old / "metadata").mkdir(parents=True)
    (old / "run.json").write_text(json.dumps({"version": 1, "run_id": SHORT, "experiment": "e"}))
    (old / "metadata" / "00000000000000000001-aa.json").write_text(
        json.dumps({"version": 1, "metadata": {"lr": 0.5}})
    )
    tracker = create(str(tmp_path))
    assert tracker.run_ids() == [SHORT]
    assert tracker.metadata(SHORT) == {"lr": 0.5}
    assert tracker.experiments() == ["e"]
    tracker.add_metadata(SHORT, epochs=2)
    assert [p.name for p in tmp_path.iterdir()] == [old.name]
    assert tracker.metadata(SHORT) == {"lr": 0.5, "epochs": 2}


def test_a_bounded_folder_without_its_run_record_is_not_a_run(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    tracker.add_metadata(LONG_PARENT, seed=1)
    [folder] = list(tmp_path.iterdir())
    (folder / "run.json").unlink()
    (tmp_path / "notes-0123").mkdir()
    assert tracker.run_ids() == []
