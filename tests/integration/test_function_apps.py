"""``Executor(...).submit(add, 5, 7).result() == 12`` on the real clusters of the fixtures:
Slurm (a shared folder), a Docker engine (a mounted folder) and Ray."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from torchx.runner import Executor, get_runner
from torchx.specs import AppState


def add(a: int, b: int) -> int:
    return a + b


def square(x: int) -> int:
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
    # map runs one app per item (no array job yet), results in order
    assert list(ex.map(square, range(4))) == [0, 1, 4, 9]


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
