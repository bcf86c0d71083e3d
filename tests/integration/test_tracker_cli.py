"""End to end: an app launched with ``torchx run`` records its run through AppRun; the
launching side reads it back with ``torchx tracker``. Local processes, the test Slurm
cluster, and MLflow (its file store and a real ``mlflow server``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent
TORCHX = BIN / "torchx"

APP = textwrap.dedent(
    """
    import os
    from torchx.tracker import app_run_from_env

    run = app_run_from_env()
    rank = int(os.environ["RANK"])
    run.add_metadata(**{"lr": 0.01, f"loss/rank{rank}": 0.5 + rank})
    if rank == 0:
        run.add_artifact("model", __file__, {"epochs": 2})
    print("recorded", run.job_id())
    """
)


def torchx(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return invoke(cwd, *args, env=env).stdout


def invoke(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    base = {k: v for k, v in os.environ.items() if not k.startswith("TORCHX_")}
    done = subprocess.run(
        [str(TORCHX), *args],
        cwd=cwd,
        env={**base, "PATH": f"{BIN}:{base.get('PATH', '')}", **(env or {})},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"torchx {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


def tracker_json(cwd: Path, *args: str) -> Any:
    return json.loads(torchx(cwd, "tracker", "list", *args, "--json"))


def project(tmp_path: Path, tracker_config: str) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / ".torchxconfig").write_text(tracker_config)
    (work / "app.py").write_text(APP)
    return work


def fsspec_config(root: Path) -> str:
    return f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={root}\n"


def launched_handle(done: subprocess.CompletedProcess[str]) -> str:
    """The handle a waiting ``torchx run`` prints on stdout; the app's log (on stderr) says
    it recorded its run under that same job id."""
    handle = done.stdout.strip()
    found = re.findall(r"recorded (\S+)", done.stderr)
    assert found == [handle, handle], f"{done.stdout}\n{done.stderr}"
    return handle


def check_flow(work: Path, handle: str, replicas: int) -> None:
    jobs = tracker_json(work, "jobs")
    assert {"job_id": handle} in jobs
    metadata = tracker_json(work, "metadata", handle)["metadata"]
    losses = {f"loss/rank{r}": 0.5 + r for r in range(replicas)}
    assert metadata == {"lr": 0.01, **losses}
    [artifact] = tracker_json(work, "artifacts", handle)
    assert artifact["name"] == "model" and artifact["metadata"] == {"epochs": 2}
    assert artifact["path"].endswith("app.py")
    table = torchx(work, "tracker", "list", "metadata", handle)
    assert re.search(r"^lr\s+0\.01$", table, re.M), table


def check_lineage(work: Path, parent: str, child: str) -> None:
    assert tracker_json(work, "jobs", "--parent-run-id", parent) == [{"job_id": child}]
    lineage = tracker_json(work, "lineage", parent)
    assert lineage["lineage"] == [{"relation": "descendant", "run_id": child, "artifact": None}]
    lineage = tracker_json(work, "lineage", child, "--sources-only")
    assert lineage["lineage"] == [{"relation": "source", "run_id": parent, "artifact": None}]


def run_local(work: Path, *extra: str) -> str:
    done = invoke(
        work, "run", *extra, "-s", "local_cwd", "utils.python", "--num_replicas", "2",
        "--script", "app.py",
    )  # fmt: skip
    return launched_handle(done)


def test_local_run_records_and_cli_reads_back(tmp_path: Path) -> None:
    work = project(tmp_path, fsspec_config(tmp_path / "runs"))
    handle = run_local(work)
    assert handle.startswith("local_cwd://torchx/")
    check_flow(work, handle, replicas=2)
    assert tracker_json(work, "experiments") == [{"experiment": "default"}]

    child = run_local(work, "--parent_run_id", handle)
    check_lineage(work, handle, child)


def test_a_long_parent_run_id_reaches_every_replica(tmp_path: Path) -> None:
    # base32 of an id past 145 bytes made a file name too long, and every replica's
    # app_run_from_env() crashed recording its parent
    work = project(tmp_path, fsspec_config(tmp_path / "runs"))
    parent = "s3://datasets/" + "imagenet-shard-" * 20 + "ü"
    child = run_local(work, "--parent_run_id", parent)
    check_flow(work, child, replicas=2)
    check_lineage(work, parent, child)


@pytest.mark.parametrize("store", ["file_store", "server"])
def test_mlflow_same_flow(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    pytest.importorskip("mlflow")
    if store == "server":
        uri = request.getfixturevalue("mlflow_server").url
    else:
        uri = f"file://{tmp_path}/mlruns"
    config = (
        "[torchx:tracker]\nmlflow=torchx.tracker.mlflow:create_tracker\n\n"
        f"[tracker:mlflow]\nconfig={uri}\n"
    )
    work = project(tmp_path, config)
    env = {"TORCHX_TRACKING_EXPERIMENT_NAME": f"cli-{tmp_path.name}"}
    done = invoke(
        work, "run", "-s", "local_cwd", "utils.python", "--num_replicas", "2",
        "--env", f"TORCHX_TRACKING_EXPERIMENT_NAME={env['TORCHX_TRACKING_EXPERIMENT_NAME']}",
        "--script", "app.py",
        env=env,
    )  # fmt: skip
    handle = launched_handle(done)

    def tj(*args: str) -> Any:
        return json.loads(torchx(work, "tracker", "list", *args, "--json", env=env))

    assert {"job_id": handle} in tj("jobs")
    metadata = tj("metadata", handle)["metadata"]
    # MLflow keeps tag values as text
    assert metadata == {"lr": "0.01", "loss/rank0": "0.5", "loss/rank1": "1.5"}
    [artifact] = tj("artifacts", handle)
    assert artifact["name"] == "model" and artifact["metadata"] == {"epochs": 2}
    assert artifact["path"].endswith("/artifacts/model/app.py")
    assert env["TORCHX_TRACKING_EXPERIMENT_NAME"] in {e["experiment"] for e in tj("experiments")}


def test_slurm_run_records_and_cli_reads_back(slurm_env: Any, tmp_path: Path) -> None:
    work = project(tmp_path, fsspec_config(tmp_path / "runs"))
    job_dir = tmp_path / "job"
    cfg = f"job_dir={job_dir},partition={slurm_env.partition}"
    env = {"SLURM_CONF": slurm_env.env["SLURM_CONF"], "PATH": slurm_env.env["PATH"]}

    def submit(*extra: str) -> str:
        out = torchx(
            work, "run", *extra, "-s", "slurm", "-cfg", cfg, "utils.python",
            "--num_replicas", "2", "--script", str(work / "app.py"),
            env=env,
        )  # fmt: skip
        handle = out.strip().splitlines()[-1]
        assert re.fullmatch(r"slurm://torchx/\d+", handle), out
        from torchx.schedulers.slurm_scheduler import SlurmScheduler

        desc = SlurmScheduler().wait(handle.rsplit("/", 1)[1], timeout=120)
        assert desc is not None and desc.state.name == "SUCCEEDED", desc
        return handle

    handle = submit()
    check_flow(work, handle, replicas=2)
    child = submit("--parent_run_id", handle)
    check_lineage(work, handle, child)
