"""``Executor(...).submit(add, 5, 7).result() == 12`` on the real clusters of the fixtures:
Slurm (a shared folder), a Docker engine (a mounted folder) and Ray."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from torchx.runner import Executor, FunctionFuture, get_runner
from torchx.specs import AppState


def add(a: int, b: int) -> int:
    return a + b


def square(x: int) -> int:
    return x * x


def slow_square(x: int) -> int:
    import time

    if x:
        time.sleep(30)
    return x * x


def test_add_on_slurm(slurm_env: Any, tmp_path: Path) -> None:
    ex = Executor(
        scheduler="slurm",
        cfg={"partition": slurm_env.partition, "job_dir": str(tmp_path / "job")},
        poll_interval=0.5,
    )
    future = ex.submit(add, 5, 7)
    assert future.handle.startswith("slurm://torchx/")
    assert future.result(timeout=120) == 12


def _slurm_executor(
    slurm_env: Any, tmp_path: Path, max_in_flight: int, keep_calls: bool = False
) -> Executor:
    return Executor(
        scheduler="slurm",
        cfg={"partition": slurm_env.partition, "job_dir": str(tmp_path / "job")},
        poll_interval=0.5,
        max_in_flight=max_in_flight,
        keep_calls=keep_calls,
        transport=str(tmp_path / "transport"),  # the test's own: only its calls are there
    )


def _futures_made(ex: Executor, monkeypatch: pytest.MonkeyPatch) -> list[FunctionFuture]:
    """Every future ``ex`` makes from now on, held here: ``map`` hands out results only, and
    the executor itself holds its futures weakly."""
    made: list[FunctionFuture] = []
    hold = ex._apps.add

    def hold_and_keep(futures: Any) -> None:
        futures = list(futures)
        made.extend(futures)
        hold(futures)

    monkeypatch.setattr(ex._apps, "add", hold_and_keep)
    return made


def test_map_of_sixteen_on_slurm_is_one_array_job(
    slurm_env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # kept, so that a trial's future can be rebuilt after the map took its result
    ex = _slurm_executor(slurm_env, tmp_path, max_in_flight=4, keep_calls=True)
    made = _futures_made(ex, monkeypatch)
    results = ex.map(square, range(16))
    handles = [f.handle for f in made]
    app_ids = [h.rsplit("/", 1)[1] for h in handles]
    array_jobs = {app_id.split("_")[0] for app_id in app_ids}
    assert len(array_jobs) == 1, handles  # one sbatch --array for the sixteen items
    (array_job,) = array_jobs
    assert app_ids == [f"{array_job}_{i}" for i in range(16)]
    assert list(results) == [x * x for x in range(16)]

    # Slurm's own accounting: one job, sixteen tasks of its array, every one completed.
    deadline = time.monotonic() + 60
    while True:
        rows = slurm_env.run(
            "sacct", f"--jobs={array_job}", "-X", "-n", "-P", "-o", "JobID,State", check=False
        ).stdout.split()
        if sorted(rows) == sorted(f"{array_job}_{i}|COMPLETED" for i in range(16)):
            break
        assert time.monotonic() < deadline, rows
        time.sleep(0.5)
    # a trial's handle still rebuilds its future, in the way any app handle does; that
    # future (of an executor that does not keep calls) removes the call once read
    assert Executor.future(handles[5], transport=ex.transport).result(timeout=120) == 25
    assert ex.remove_ended_calls() == 15
    assert list(Path(ex.transport, "calls").iterdir()) == []


def test_closing_a_slurm_map_cancels_its_remaining_trials(
    slurm_env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ex = _slurm_executor(slurm_env, tmp_path, max_in_flight=1)
    futures = _futures_made(ex, monkeypatch)
    results = ex.map(slow_square, range(4))
    assert next(results) == 0
    results.close()
    assert futures[0].result() == 0 and not futures[0].cancelled()
    assert all(f.cancelled() for f in futures[1:])
    runner = get_runner()
    deadline = time.monotonic() + 60
    while True:
        states = [runner.status(f.handle) for f in futures[1:]]
        if all(s is None or s.is_terminal() for s in states):
            break
        assert time.monotonic() < deadline, states
        time.sleep(0.5)
    assert any(s is not None and s.state == AppState.CANCELLED for s in states), states


def rank_and_total() -> tuple[int, int]:
    """This rank and the all-reduced sum of 10 from each rank, over gloo on the CPU."""
    import torch.distributed as dist
    from torch import full

    dist.init_process_group("gloo")
    total = full((1,), 10.0)
    dist.all_reduce(total)
    rank = dist.get_rank()
    dist.destroy_process_group()
    return rank, int(total.item())


@pytest.mark.slow
def test_a_function_on_two_slurm_nodes_all_reduces(
    slurm_env: Any, tmp_path: Path, free_port: int
) -> None:
    pytest.importorskip("torch")
    ex = Executor(
        scheduler="slurm",
        cfg={"partition": slurm_env.partition, "job_dir": str(tmp_path / "job")},
        num_replicas=2,
        rdzv_port=free_port,  # both test nodes are this machine
        poll_interval=0.5,
    )
    future = ex.submit(rank_and_total)
    assert future.result(timeout=240, all_ranks=True) == [(0, 20), (1, 20)]


def _runtime_for_the_image(root: Path) -> Path:
    """A folder holding torchx-runtime-function and cloudpickle (pure Python both), as a
    job's image would install them. The test image is python3.11-minimal, whose standard
    library lacks json, dataclasses and uuid (any full Python has them): the same 3.11
    pure-Python modules of this interpreter fill the gap."""
    import sysconfig

    import cloudpickle  # type: ignore[import-untyped]

    import torchx.runtime.function as runtime

    site = root / "site"
    shutil.copytree(Path(cloudpickle.__file__).parent, site / "cloudpickle")
    shutil.copytree(Path(runtime.__file__).parent, site / "torchx" / "runtime" / "function")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(stdlib / "json", site / "json")
    for module in ("dataclasses.py", "uuid.py"):
        shutil.copy(stdlib / module, site / module)
    return site


def test_add_on_docker(
    docker_engine: Any,
    docker_python_image: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", docker_engine.base_url)
    site = _runtime_for_the_image(tmp_path)
    transport = tmp_path / "transport"
    ex = Executor(
        scheduler="local_docker",
        cfg={"network": "host", "shm_size": "64m"},
        transport=str(transport),
        image=docker_python_image,
        python="python3",
        env={"PYTHONPATH": "/opt/torchx-site"},
        mounts=[f"type=bind,src={site},dst=/opt/torchx-site,readonly"],
        poll_interval=0.5,
    )
    future = ex.submit(add, 5, 7)
    assert future.handle.startswith("local_docker://torchx/")
    assert future.result(timeout=120) == 12
    # the transport folder was mounted into the container at its own path
    app = get_runner().dryrun(ex._app(str(transport / "calls" / "x")), "local_docker", ex.cfg)
    mounts = app.request.containers[0].config["HostConfig"]["Mounts"]
    assert {"Type": "bind", "Source": str(transport), "Target": str(transport)} in [
        {k: m[k] for k in ("Type", "Source", "Target")} for m in mounts
    ]


def test_add_on_ray(ray_cluster: Any) -> None:
    ex = Executor(scheduler="ray", cfg={"address": ray_cluster.address}, poll_interval=0.5)
    future = ex.submit(add, 5, 7)
    assert future.handle.startswith("ray://torchx/")
    assert future.result(timeout=240) == 12
    status = get_runner().wait(future.handle, wait_interval=0.5, timeout=120)
    assert status is not None and status.state == AppState.SUCCEEDED
