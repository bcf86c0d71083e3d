"""Replicas of one app creating its MLflow experiment and run at the same instant.

Each round, every replica process opens a tracker on an experiment that does not exist
yet and records ``loss/rank<R>`` for one new job id, all released together. Before the
store lock, MLflow's file store let two replicas each create the experiment (or each
keep a run, one of which was then deleted as a duplicate), and a reader found only one
replica's records; on a new SQLite database two replicas both made its tables, and one
failed. The assertions hold for any interleaving, so the test is not timed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mlflow", reason="install torchx-tracking[mlflow] for the MLflow tests")

from mlflow.entities import ViewType  # type: ignore[import-untyped,import-not-found,unused-ignore]

from torchx.tracker.mlflow import MLflowTracker

REPLICAS = 4
# Each round is a fresh race on a new experiment and run; several rounds make a lost
# record likely enough to show under the old code (4 replicas lost one about 1 round in 5).
ROUNDS = {"file_store": 8, "sqlite": 1, "server": 3}

REPLICA = textwrap.dedent(
    """
    import os, sys, time
    from torchx.tracker.mlflow import MLflowTracker

    uri, prefix, rank, rounds, sync = sys.argv[1:]
    rank, rounds = int(rank), int(rounds)
    for i in range(rounds):
        print(f"ready {i}", flush=True)
        while not os.path.exists(os.path.join(sync, f"go-{i}")):
            time.sleep(0.002)
        job = f"local_cwd://torchx/{prefix}-{i}"
        os.environ["TORCHX_JOB_ID"] = job  # as the runner sets it: the tracker opens the run
        tracker = MLflowTracker(experiment_name=f"{prefix}-{i}", tracking_uri=uri)
        tracker.add_metadata(job, **{"lr": 0.01, f"loss/rank{rank}": rank})
    print("done", flush=True)
    """
)


@pytest.fixture(params=["file_store", "sqlite", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "file_store":
        return "file_store", f"file://{tmp_path}/mlruns"
    if request.param == "sqlite":  # a new database: the replicas also race to make its tables
        return "sqlite", f"sqlite:///{tmp_path}/mlflow.db"
    server: Any = request.getfixturevalue("mlflow_server")
    return "server", str(server.url)


def test_replicas_starting_together_land_in_one_experiment_and_run(
    store: tuple[str, str], tmp_path: Path
) -> None:
    kind, uri = store
    rounds = ROUNDS[kind]
    prefix = f"race-{tmp_path.name}"
    sync = tmp_path / "sync"
    sync.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHX_", "MLFLOW_"))}
    env["MLFLOW_ALLOW_FILE_STORE"] = "true"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", REPLICA, uri, prefix, str(rank), str(rounds), str(sync)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(REPLICAS)
    ]
    try:
        for i in range(rounds):
            for process in processes:
                assert process.stdout is not None
                line = process.stdout.readline()
                assert line == f"ready {i}\n", f"{line!r}: {process.communicate(timeout=60)[1]}"
            (sync / f"go-{i}").touch()  # all replicas are waiting: release them at once
        for process in processes:
            out, err = process.communicate(timeout=240)
            assert process.returncode == 0 and out == "done\n", err
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()

    expected = {"lr": "0.01", **{f"loss/rank{r}": str(r) for r in range(REPLICAS)}}
    for i in range(rounds):
        name, job = f"{prefix}-{i}", f"local_cwd://torchx/{prefix}-{i}"
        reader = MLflowTracker(experiment_name=name, tracking_uri=uri)
        experiments = [e for e in reader.client.search_experiments() if e.name == name]
        assert len(experiments) == 1, f"round {i}: {len(experiments)} experiments named {name}"
        runs = reader.client.search_runs([reader.experiment_id], run_view_type=ViewType.ALL)
        assert [r.info.run_name for r in runs] == [job], f"round {i}: one run, none deleted"
        assert reader.metadata(job) == expected, f"round {i}"
        assert runs[0].data.metrics == {"lr": 0.01, **{f"loss/rank{r}": r for r in range(REPLICAS)}}
