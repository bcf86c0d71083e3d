"""MLflowTracker against MLflow's local file store and a real ``mlflow server``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from torchx.tracker import InvalidRecordError, Lineage, TrackerDescendant, TrackerSource

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


def test_replicas_creating_the_run_at_once_settle_on_one(tracking_uri: str, tmp_path: Path) -> None:
    experiment = f"race-{tmp_path.name}"
    MLflowTracker(experiment_name=experiment, tracking_uri=tracking_uri)  # create it once
    replica = textwrap.dedent(
        f"""
        import sys
        from torchx.tracker.mlflow import MLflowTracker
        t = MLflowTracker(experiment_name={experiment!r}, tracking_uri={tracking_uri!r})
        t.add_metadata({RUN!r}, **{{f"rank{{sys.argv[1]}}": sys.argv[1]}})
        """
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", replica, str(rank)], stderr=subprocess.PIPE)
        for rank in range(3)
    ]
    for process in processes:
        _, err = process.communicate(timeout=240)
        assert process.returncode == 0, err.decode()
    reader = MLflowTracker(experiment_name=experiment, tracking_uri=tracking_uri)
    assert reader.metadata(RUN) == {"rank0": "0", "rank1": "1", "rank2": "2"}
    assert reader.run_ids() == [RUN]


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


def test_names_mlflow_cannot_store_are_refused(tmp_path: Path) -> None:
    tracker = MLflowTracker("e", f"file://{tmp_path}/mlruns")
    with pytest.raises(InvalidRecordError, match=r"metadata key.*'a=b'"):
        tracker.add_metadata(RUN, **{"a=b": 1})
    assert tracker.metadata(RUN) == {}
