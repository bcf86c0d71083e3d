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

import pytest

pytest.importorskip("mlflow", reason="install torchx-tracking[mlflow] for the MLflow tests")

from mlflow.entities import ViewType  # type: ignore[import-untyped,import-not-found,unused-ignore]

from torchx.tracker.mlflow import MLflowTracker

# Each round is a fresh race on a new experiment and run; several rounds make a lost
# record likely enough to show under the old code (4 replicas lost one about 1 round in 5).
# On SQLite the race is the first round's (making the tables); opening it takes seconds.
REPLICAS = {"file_store": 4, "sqlite": 2}
ROUNDS = {"file_store": 6, "sqlite": 1}

REPLICA = textwrap.dedent(
    """
    import os, sys, time
    import mlflow  # loaded before the start line: the replicas race on the store alone
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


# A tracking server is covered by test_tracker_cli.py's same-flow test and the MLflow
# sweep test (trials creating the sweep's run at once); here, the stores MLflow keeps on
# local disk, where the races were seen.
@pytest.fixture(params=["file_store", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "file_store":
        return "file_store", f"file://{tmp_path}/mlruns"
    # a new database: the replicas also race to make its tables
    return "sqlite", f"sqlite:///{tmp_path}/mlflow.db"


def test_replicas_starting_together_land_in_one_experiment_and_run(
    store: tuple[str, str], tmp_path: Path
) -> None:
    kind, uri = store
    rounds, replicas = ROUNDS[kind], REPLICAS[kind]
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
        for rank in range(replicas)
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

    expected = {"lr": "0.01", **{f"loss/rank{r}": str(r) for r in range(replicas)}}
    for i in range(rounds):
        name, job = f"{prefix}-{i}", f"local_cwd://torchx/{prefix}-{i}"
        reader = MLflowTracker(experiment_name=name, tracking_uri=uri)
        experiments = [e for e in reader.client.search_experiments() if e.name == name]
        assert len(experiments) == 1, f"round {i}: {len(experiments)} experiments named {name}"
        runs = reader.client.search_runs([reader.experiment_id], run_view_type=ViewType.ALL)
        assert [r.info.run_name for r in runs] == [job], f"round {i}: one run, none deleted"
        assert reader.metadata(job) == expected, f"round {i}"
        assert runs[0].data.metrics == {"lr": 0.01, **{f"loss/rank{r}": r for r in range(replicas)}}


def test_each_store_has_one_lock_file_beside_it(tmp_path: Path) -> None:
    from torchx.tracker._store_lock import lock_path

    assert lock_path(f"file://{tmp_path}/mlruns") == f"{tmp_path}/.mlruns.torchx-lock"
    assert lock_path(f"file://{tmp_path}/mlruns/") == f"{tmp_path}/.mlruns.torchx-lock"
    assert lock_path(f"sqlite:///{tmp_path}/m.db") == f"{tmp_path}/.m.db.torchx-lock"
    server = lock_path("http://127.0.0.1:5000")
    assert server.endswith(".lock") and server != lock_path("http://127.0.0.1:5001")


def test_once_a_store_is_set_up_opening_it_waits_for_no_lock(tmp_path: Path) -> None:
    import threading

    from torchx.tracker._store_lock import store_lock, store_setup_lock

    uri = f"sqlite:///{tmp_path}/m.db"
    with store_setup_lock(uri):  # the first opening: under the lock
        (tmp_path / "m.db").write_bytes(b"")
    opened = threading.Event()

    def open_store() -> None:
        with store_setup_lock(uri):
            opened.set()

    with store_lock(uri):  # another tracker finding-or-creating a run meanwhile
        opener = threading.Thread(target=open_store)
        opener.start()
        assert opened.wait(timeout=60), "a set-up store's opening waited for the lock"
    opener.join()
