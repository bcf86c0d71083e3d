"""FsspecTracker on real filesystems: local disk, fsspec memory and S3 (moto server)."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from torchx.tracker import (
    CorruptRecordError,
    InvalidRecordError,
    Lineage,
    TrackerArtifact,
    TrackerConfigError,
    TrackerDescendant,
    TrackerSource,
    UnreadRecordWarning,
)
from torchx.tracker.backend.fsspec import FsspecTracker, create

if TYPE_CHECKING:
    from conftest import Backend

RUN = "local_cwd://torchx/train-x1"
CHILD = "slurm://torchx/42"


@pytest.fixture
def tracker(backend: Backend) -> FsspecTracker:
    return create(backend.base, **backend.storage_options)


def test_metadata_merges_records_latest_value_wins(tracker: FsspecTracker) -> None:
    tracker.add_metadata(RUN, lr=0.1, layers=[64, 32], opt={"name": "sgd", "nesterov": True})
    tracker.add_metadata(RUN, lr=0.01, note=None)
    assert tracker.metadata(RUN) == {
        "lr": 0.01,
        "layers": [64, 32],
        "opt": {"name": "sgd", "nesterov": True},
        "note": None,
    }
    assert tracker.metadata("never-recorded") == {}


def test_artifacts_by_name(tracker: FsspecTracker) -> None:
    tracker.add_artifact(RUN, "model", "s3://bucket/model-1.pt", {"epoch": 1})
    tracker.add_artifact(RUN, "model", "s3://bucket/model-2.pt", {"epoch": 2})
    tracker.add_artifact(RUN, "logs", "/tmp/logs")
    assert tracker.artifacts(RUN) == {
        "model": TrackerArtifact("model", "s3://bucket/model-2.pt", {"epoch": 2}),
        "logs": TrackerArtifact("logs", "/tmp/logs", None),
    }


def test_sources_lineage_and_run_ids(tracker: FsspecTracker) -> None:
    tracker.add_metadata(RUN, lr=0.1)
    tracker.add_source(CHILD, RUN)
    tracker.add_source(CHILD, RUN)  # a second replica recording the same parent: one record
    tracker.add_source(CHILD, "dataset://imagenet", artifact_name="train")
    assert sorted(tracker.sources(CHILD), key=lambda s: s.source_run_id) == [
        TrackerSource("dataset://imagenet", "train"),
        TrackerSource(RUN, None),
    ]
    assert tracker.sources(CHILD, artifact_name="train") == [
        TrackerSource("dataset://imagenet", "train")
    ]
    assert tracker.run_ids() == [RUN, CHILD]
    assert tracker.run_ids(parent_run_id=RUN) == [CHILD]
    assert tracker.run_ids(RUN) == [CHILD]  # 0.7's positional form
    assert tracker.run_ids(parent_run_id=CHILD) == []
    assert tracker.lineage(RUN) == Lineage(RUN, [], [TrackerDescendant(CHILD, None)])
    lineage = tracker.lineage(CHILD)
    assert lineage.descendants == [] and len(lineage.sources) == 2


def test_experiments_group_runs(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHX_TRACKING_EXPERIMENT_NAME", "resnet")
    create(backend.base, **backend.storage_options).add_metadata(RUN, lr=0.1)
    monkeypatch.delenv("TORCHX_TRACKING_EXPERIMENT_NAME")
    other = create(backend.base, **backend.storage_options)
    other.add_metadata(CHILD, lr=0.2)
    assert other.experiments() == ["default", "resnet"]
    assert other.run_ids(experiment="resnet") == [RUN]
    assert other.run_ids(experiment="default") == [CHILD]


def test_bad_records_name_the_field_and_write_nothing(tmp_path: Path) -> None:
    tracker = create(str(tmp_path / "runs"))
    with pytest.raises(InvalidRecordError, match=r"metadata\['when'\].*datetime.*nothing was"):
        import datetime

        tracker.add_metadata(RUN, lr=0.1, when=datetime.date(2024, 1, 1))
    with pytest.raises(InvalidRecordError, match=r"metadata\['loss'\].*NaN"):
        tracker.add_metadata(RUN, loss=float("nan"))
    with pytest.raises(InvalidRecordError, match="artifact name"):
        tracker.add_artifact(RUN, "", "/tmp/x")
    with pytest.raises(InvalidRecordError, match="run_id"):
        tracker.add_metadata("", lr=1)
    with pytest.raises(TrackerConfigError, match=r"run_ids filter.*'user'"):
        tracker.run_ids(user="me")
    assert tracker.run_ids() == []
    assert not (tmp_path / "runs").exists()  # not even the folder


def test_a_damaged_record_is_skipped_with_its_path_and_the_others_read(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    tracker.add_metadata(RUN, lr=0.1)
    tracker.add_metadata(RUN, epochs=3)
    record = min(tmp_path.glob("*/metadata/*.json"))  # the first one: lr

    def skipped_reading_metadata() -> str:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert tracker.metadata(RUN) == {"epochs": 3}
        [skipped] = [w.message for w in caught if isinstance(w.message, UnreadRecordWarning)]
        assert isinstance(skipped, CorruptRecordError) and skipped.damaged
        assert skipped.path == str(record)
        (line,) = str(skipped).splitlines()
        assert line.startswith(f"corrupt tracker record at {str(record)!r} was not read")
        return line

    record.write_text("{not json")
    assert "not valid JSON" in skipped_reading_metadata()
    record.write_text(json.dumps({"version": 99, "metadata": {}}))
    assert "version 99" in skipped_reading_metadata()
    # read as strictly as result documents: deep nesting and NaN are reported, not raised
    for damage, reason in (
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"version": 1, "metadata": {"lr": NaN}}', "holds NaN"),
        ("[1]", r"expected a JSON object \(a tracker record\), found an array"),
        ('{"version": 1, "metadata": [1]}', "'metadata' is not a JSON object"),
    ):
        record.write_text(damage)
        assert re.search(reason, skipped_reading_metadata())
    # all or nothing, for a caller who asks for it
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadRecordWarning)
        with pytest.raises(CorruptRecordError, match=str(record)):
            tracker.metadata(RUN)


def test_foreign_files_under_the_root_are_not_runs(tmp_path: Path) -> None:
    tracker = create(str(tmp_path))
    tracker.add_metadata(RUN, lr=0.1)
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "not-base32!").mkdir()
    assert tracker.run_ids() == [RUN]


def test_config_is_a_url_or_a_torchx_07_options_file(tmp_path: Path) -> None:
    options = tmp_path / "fsspec_backend.conf"
    options.write_text(
        f"# as in torchx 0.7\nprotocol=file\nroot_path={tmp_path / 'kept'}\nexperiment_name=e1\n"
    )
    from_file = create(f"file://{options}")
    from_file.add_metadata(RUN, lr=0.1)
    assert from_file.root_dir == str(tmp_path / "kept")
    assert create(str(tmp_path / "kept")).metadata(RUN) == {"lr": 0.1}
    assert create(str(tmp_path / "kept")).experiments() == ["e1"]
    assert create(config_file=str(tmp_path / "kept")).metadata(RUN) == {"lr": 0.1}  # 0.7's name

    options.write_text("protocol=file\n")
    with pytest.raises(TrackerConfigError, match="root_path"):
        create(str(options))
    with pytest.raises(TrackerConfigError, match=r"\[tracker:NAME\]"):
        create(None)


def test_artifact_metadata_that_is_not_a_dict_is_one_line(tmp_path: Path) -> None:
    tracker = create(str(tmp_path / "runs"))
    with pytest.raises(InvalidRecordError) as info:
        tracker.add_artifact(RUN, "model", "/tmp/m.pt", metadata="torchscript")  # type: ignore[arg-type]
    assert str(info.value) == (
        "artifact 'model' metadata: got 'torchscript'; give a dict of str keys to JSON values;"
        " nothing was written"
    )
    assert tracker.artifacts(RUN) == {}


def test_a_config_of_an_unknown_protocol_or_an_unwritable_folder_is_one_line(
    tmp_path: Path,
) -> None:
    with pytest.raises(TrackerConfigError) as info:
        create("nosuch://runs")
    (line,) = str(info.value).splitlines()
    assert line.startswith("fsspec tracker config: got 'nosuch://runs'; Protocol not known")
    a_file = tmp_path / "a_file"
    a_file.write_text("keep me")
    tracker = create(str(a_file / "runs"))  # the folder is made by the first write
    with pytest.raises(TrackerConfigError) as info:
        tracker.add_metadata(RUN, lr=0.1)
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"fsspec tracker config: got '{a_file}/runs'; its folder cannot be")
    assert a_file.read_text() == "keep me"


def test_reading_makes_nothing_and_a_missing_folder_is_named(tmp_path: Path) -> None:
    typo = tmp_path / "rnus"
    tracker = create(str(typo))
    assert tracker.run_ids() == [] and tracker.metadata(RUN) == {}
    assert tracker.experiments() == [] and tracker.lineage(RUN).sources == []
    assert not typo.exists()
    assert tracker.missing_store_note() == (
        f"fsspec tracker config '{typo}': the folder does not exist, so nothing has been"
        " recorded there yet; a run's first record makes it (if the URL is mistyped, correct"
        " config= under [tracker:NAME] in .torchxconfig)"
    )
    assert not typo.exists()
    tracker.add_metadata(RUN, lr=0.1)  # a write makes it
    assert tracker.missing_store_note() is None
    assert create(str(typo)).missing_store_note() is None


def test_an_options_file_s_missing_folder_is_named_with_the_file(tmp_path: Path) -> None:
    options = tmp_path / "tracker.conf"
    options.write_text(f"protocol=file\nroot_path={tmp_path / 'rnus'}\n")
    note = create(str(options)).missing_store_note()
    assert note is not None and note.startswith(
        f"fsspec tracker config '{options}': its folder {tmp_path / 'rnus'} does not exist"
    )


def test_a_folder_with_records_has_no_note_on_every_store(backend: Backend) -> None:
    fresh = create(backend.base, **backend.storage_options)
    assert "does not exist" in (fresh.missing_store_note() or "")
    fresh.add_metadata(RUN, lr=0.1)
    assert create(backend.base, **backend.storage_options).missing_store_note() is None
