"""MLflowTracker against MLflow's local file store and a real ``mlflow server``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from torchx.tracker import (
    InvalidRecordError,
    Lineage,
    TrackerConfigError,
    TrackerDescendant,
    TrackerSource,
)

pytest.importorskip("mlflow", reason="install torchx-tracking[mlflow] for the MLflow tests")

from torchx.tracker.mlflow import MLflowTracker, create_tracker

RUN = "local_cwd://torchx/train-x1"
CHILD = "local_cwd://torchx/train-x2"


@pytest.fixture(params=["file_store", "server"])
def tracking_uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file_store":
        return f"file://{tmp_path}/mlruns"
    server: Any = request.getfixturevalue("mlflow_server")
    return str(server.url)


def test_records_round_trip(tracking_uri: str, tmp_path: Path) -> None:
    experiment = f"exp-{tmp_path.name}"
    tracker = MLflowTracker(experiment_name=experiment, tracking_uri=tracking_uri)
    tracker.add_metadata(RUN, lr=0.1, optimizer="sgd", layers=[64, 32])
    model = tmp_path / "model.pt"
    model.write_bytes(b"weights")
    tracker.add_artifact(RUN, "model", str(model), {"epoch": 3})
    tracker.add_artifact(RUN, "dataset", "s3://bucket/imagenet")
    tracker.add_source(CHILD, RUN)
    tracker.add_source(CHILD, RUN)  # idempotent, as every replica records it

    # a second tracker (another process, later) reads it all back
    reader = MLflowTracker(experiment_name=experiment, tracking_uri=tracking_uri)
    assert reader.metadata(RUN) == {"lr": "0.1", "optimizer": "sgd", "layers": "[64, 32]"}
    artifacts = reader.artifacts(RUN)
    assert sorted(artifacts) == ["dataset", "model"]
    assert artifacts["model"].path.endswith("/artifacts/model/model.pt")
    assert artifacts["model"].metadata == {"epoch": 3}
    assert artifacts["dataset"].path == "s3://bucket/imagenet"
    assert reader.sources(CHILD) == [TrackerSource(RUN, None)]
    assert reader.run_ids() == [RUN, CHILD]
    assert reader.run_ids(parent_run_id=RUN) == [CHILD]
    assert reader.lineage(RUN) == Lineage(RUN, [], [TrackerDescendant(CHILD, None)])
    assert experiment in reader.experiments()
    assert reader.run_ids(experiment="no-such-experiment") == []
    if tracking_uri.startswith("file:"):
        stored = artifacts["model"].path.removeprefix("file://")
        assert Path(stored).read_bytes() == b"weights"


def test_create_tracker_reads_torchx_07_config(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("TORCHX_TRACKING_EXPERIMENT_NAME", raising=False)
    (tmp_path / ".torchxconfig").write_text(
        "[tracker:mlflow]\nconfig=ignored\nexperiment_name=from-file\n"
        f"tracking_uri=file://{tmp_path}/mlruns\n"
    )
    tracker = create_tracker(str(tmp_path))
    assert tracker.experiment_name == "from-file"
    assert tracker.tracking_uri == f"file://{tmp_path}/mlruns"
    monkeypatch.setenv("TORCHX_TRACKING_EXPERIMENT_NAME", "from-env")
    assert create_tracker(f"file://{tmp_path}/mlruns").experiment_name == "from-env"


def test_a_huge_or_unreadable_config_file_is_refused_in_one_line(tmp_path: Path) -> None:
    import tracemalloc

    from torchx.tracker._config_file import MAX_OPTIONS_FILE_BYTES

    config = tmp_path / ".torchxconfig"
    with config.open("wb") as f:  # 1 GiB, sparse: costs no disk, would cost 1 GiB to hold
        f.write(b"[tracker:mlflow]\nexperiment_name=e\n")
        f.truncate(1 << 30)
    tracemalloc.start()
    try:
        with pytest.raises(TrackerConfigError) as caught:
            create_tracker(str(tmp_path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * MAX_OPTIONS_FILE_BYTES, f"reading a 1 GiB config held {peak} bytes"
    (line,) = str(caught.value).splitlines()
    assert line.startswith(f"mlflow tracker config: got {str(tmp_path)!r}; {config} holds")
    assert f"{1 << 30} bytes" in line
    assert f"at most MAX_OPTIONS_FILE_BYTES ({MAX_OPTIONS_FILE_BYTES}) bytes" in line

    config.write_bytes(b"[tracker:mlflow]\nexperiment_name=\xff\n")  # not UTF-8
    with pytest.raises(TrackerConfigError, match=rf"{config} is not UTF-8 text \("):
        create_tracker(str(config))
    config.write_bytes(b"experiment_name=e\n")  # no section header: one line all the same
    with pytest.raises(TrackerConfigError) as caught:
        create_tracker(str(config))
    assert "\n" not in str(caught.value) and "no section headers" in str(caught.value)
    # a file saved with a byte-order mark, at the limit, reads
    text = f"[tracker:mlflow]\nexperiment_name=bom\ntracking_uri=file://{tmp_path}/mlruns\n"
    padded = text + "#" * (MAX_OPTIONS_FILE_BYTES - 3 - len(text))
    config.write_bytes(b"\xef\xbb\xbf" + padded.encode())
    assert config.stat().st_size == MAX_OPTIONS_FILE_BYTES
    assert create_tracker(str(config)).experiment_name == "bom"


def test_a_damaged_torchx_tag_is_skipped_with_a_warning_and_the_rest_read(
    tmp_path: Path,
) -> None:
    import warnings

    from torchx.tracker import UnreadRecordWarning

    uri = f"file://{tmp_path}/mlruns"
    tracker = MLflowTracker("e", uri)
    tracker.add_artifact(RUN, "model", "s3://bucket/model.pt")
    tracker.add_artifact(RUN, "data", "s3://bucket/data")
    tracker.add_source(CHILD, RUN, "model")
    tracker.add_source(CHILD, "dataset-v1")
    # edited by hand (MLflow's UI lets anyone change a tag)
    tracker.client.set_tag(tracker.get_run_id(RUN), "torchx.artifact.data", "{not json")
    tracker.client.set_tag(tracker.get_run_id(RUN), "torchx.artifact.shape", '{"x": 1}')
    listed = '{"path": "/data/l", "metadata": [1]}'
    tracker.client.set_tag(tracker.get_run_id(RUN), "torchx.artifact.listed", listed)
    tracker.client.set_tag(tracker.get_run_id(CHILD), "torchx.source.edited", '{"x": 1}')

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert list(tracker.artifacts(RUN)) == ["model"]
        sources = sorted(tracker.sources(CHILD), key=lambda s: s.source_run_id)
        assert sources == [TrackerSource("dataset-v1", None), TrackerSource(RUN, "model")]
        assert tracker.run_ids(parent_run_id=RUN) == [CHILD]
    skipped = [str(w.message) for w in caught if isinstance(w.message, UnreadRecordWarning)]
    fix = (
        "record it again (add_artifact, add_source), or delete the tag (MLflow's UI, or"
        " MlflowClient.delete_tag), to read the run without it"
    )
    assert skipped[0] == (
        f"corrupt tracker record at '{uri} run {RUN} tag torchx.artifact.data' was not read:"
        " not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2"
        f" (char 1)); {fix}"
    )
    # the fault named as the fsspec tracker names it: its path is fine, its metadata not
    assert skipped[1].endswith(
        f"tag torchx.artifact.listed' was not read: artifact 'metadata' is not a JSON object; {fix}"
    )
    assert skipped[2].endswith(
        f"tag torchx.artifact.shape' was not read: an artifact needs a str 'path'; {fix}"
    )
    assert skipped[3:] and all(
        m.endswith(
            f"tag torchx.source.edited' was not read: a source needs a str 'source_run_id'; {fix}"
        )
        for m in skipped[3:]
    )
    # each warning names the line that called the read, not one inside torchx
    assert {w.filename for w in caught} == {__file__}


def test_names_mlflow_cannot_store_are_refused(tmp_path: Path) -> None:
    tracker = MLflowTracker("e", f"file://{tmp_path}/mlruns")
    with pytest.raises(InvalidRecordError, match=r"metadata key.*'a=b'"):
        tracker.add_metadata(RUN, **{"a=b": 1})
    assert tracker.metadata(RUN) == {}


def test_a_sweep_trial_is_a_child_run_with_its_arguments_as_params(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sweep = "local_cwd://torchx/sweep-abc"
    uri = f"file://{tmp_path}/mlruns"
    runs = {}
    for index, lr in enumerate(["0.1", "0.01"]):
        trial = f"local_cwd://torchx/train-t{index}"
        monkeypatch.setenv("TORCHX_JOB_ID", trial)
        monkeypatch.setenv("TORCHX_SWEEP_ID", sweep)
        monkeypatch.setenv("TORCHX_SWEEP_INDEX", str(index))
        monkeypatch.setenv("TORCHX_SWEEP_ARGS", f'{{"lr": "{lr}", "bs": "32"}}')
        tracker = MLflowTracker("sweeps", uri)
        tracker.add_metadata(trial, objective=float(lr) * 2, note="text is no metric")
        runs[index] = tracker.get_run(trial)
    parent = tracker.get_run(sweep)
    assert parent.data.tags["torchx.sweep"] == "true"
    for index, lr in enumerate(["0.1", "0.01"]):
        run = runs[index]
        assert run.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert run.data.tags["torchx.sweep_index"] == str(index)
        assert run.data.params == {"lr": lr, "bs": "32"}
        assert run.data.metrics == {"objective": float(lr) * 2}
    # MLflow's own search finds the trials under the sweep's run
    children = tracker.client.search_runs(
        [tracker.experiment_id], f"tags.mlflow.parentRunId = '{parent.info.run_id}'"
    )
    assert sorted(r.info.run_name for r in children) == [
        "local_cwd://torchx/train-t0",
        "local_cwd://torchx/train-t1",
    ]
    # only the app's own job is filed under the sweep: another run it records is not
    tracker.add_metadata("local_cwd://torchx/other", x=1)
    assert "mlflow.parentRunId" not in tracker.get_run("local_cwd://torchx/other").data.tags


def test_sweep_arguments_that_are_not_a_json_object_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCHX_JOB_ID", RUN)
    monkeypatch.setenv("TORCHX_SWEEP_ID", "local_cwd://torchx/sweep-abc")
    monkeypatch.setenv("TORCHX_SWEEP_ARGS", "[1, 2]")
    with pytest.raises(TrackerConfigError, match=r"TORCHX_SWEEP_ARGS.*JSON object"):
        MLflowTracker("e", f"file://{tmp_path}/mlruns")


def test_a_tracking_uri_mlflow_cannot_use_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TrackerConfigError) as info:
        create_tracker("nosuch://runs")
    (line,) = str(info.value).splitlines()
    assert line.startswith("mlflow tracking_uri: got 'nosuch://runs'; MLflow cannot use it (")
    assert line.endswith("give an http(s)://, sqlite:///, postgresql:// or file:/// URI")
