"""DataParallel from the scope, and DistributedDataParallel under a real torchrun."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torchx_test_fixtures_ports import free_loopback_port

import torchx.devices as tx

META = torch.device("meta")
CPU = torch.device("cpu")
HAS_GPU = torch.cuda.is_available()


def test_outside_a_scope_the_module_comes_back_untouched() -> None:
    module = nn.Linear(2, 2)
    assert tx.DataParallel(module) is module


@pytest.mark.parametrize("form", [-1, "cpu"])
def test_cpu_scope_returns_the_module_itself(form: object) -> None:
    module = nn.Linear(2, 2)
    with tx.device_scope(form):  # type: ignore[arg-type]
        wrapped = tx.DataParallel(module)
        assert wrapped is module
        assert wrapped(torch.ones(1, 2)).shape == (1, 2)


def test_single_device_scope_moves_the_module_there() -> None:
    module = nn.Linear(2, 2)
    with tx.device_scope(META):
        wrapped = tx.DataParallel(module)
    assert wrapped is module
    assert module.weight.device == META


@pytest.mark.skipif(HAS_GPU, reason="exercises the missing-GPU path; this machine has a GPU")
@pytest.mark.parametrize("form", [[0, 1], "cuda:all"], ids=repr)
def test_gpu_list_without_gpus_falls_back_to_the_module(form: object) -> None:
    module = nn.Linear(2, 2)
    with (
        pytest.warns(tx.GPUFallbackWarning),
        tx.device_scope(form, on_missing_gpu="cpu"),  # type: ignore[arg-type]
    ):
        assert tx.DataParallel(module) is module


def test_data_parallel_rejects_a_non_module() -> None:
    with pytest.raises(TypeError, match=r"module=3 is not a torch\.nn\.Module"):
        tx.DataParallel(3)  # type: ignore[type-var]


# torchrun environment


def test_distributed_env_reads_torchrun_variables() -> None:
    env = tx.distributed_env({"LOCAL_RANK": "1", "RANK": "3", "WORLD_SIZE": "4"})
    assert env == tx.DistributedEnv(local_rank=1, rank=3, world_size=4)


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"RANK": "0", "WORLD_SIZE": "1"}, "LOCAL_RANK is not set; start the script with torchrun"),
        ({"LOCAL_RANK": "x", "RANK": "0", "WORLD_SIZE": "1"}, "LOCAL_RANK='x' is not an integer"),
        ({"LOCAL_RANK": "0", "RANK": "-1", "WORLD_SIZE": "1"}, "RANK='-1' is negative"),
        ({"LOCAL_RANK": "0", "RANK": "2", "WORLD_SIZE": "2"}, "accepted: 0 <= RANK < WORLD_SIZE"),
    ],
)
def test_distributed_env_errors_name_the_variable(environ: dict[str, str], message: str) -> None:
    with pytest.raises((RuntimeError, ValueError), match=message):
        tx.distributed_env(environ)


def test_ddp_helper_outside_torchrun_says_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("LOCAL_RANK", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not set"):
        tx.DistributedDataParallel(nn.Linear(2, 2))
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    with pytest.raises(RuntimeError, match="MASTER_ADDR is not set"):
        tx.DistributedDataParallel(nn.Linear(2, 2))


# Without a GPU both runs are the same, so the explicit one runs only where it differs.
@pytest.mark.slow
@pytest.mark.parametrize("chosen", ["default", "cpu"] if HAS_GPU else ["default"])
def test_ddp_helper_under_torchrun_with_two_processes(tmp_path: Path, chosen: str) -> None:
    worker = Path(__file__).with_name("ddp_worker.py")
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(free_loopback_port()),
        str(worker),
        str(tmp_path),
        *(["--cpu"] if chosen == "cpu" else []),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    reports = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [r["env"] for r in reports] == [[0, 0, 2], [1, 1, 2]]
    # By default two ranks get a GPU each (nccl) where the node has two, else the CPU.
    own_gpus = chosen == "default" and HAS_GPU and torch.cuda.device_count() >= 2
    for rank, report in enumerate(reports):
        assert report["backend"] == ("nccl" if own_gpus else "gloo")
        assert report["device"] == (f"cuda:{rank}" if own_gpus else "cpu")
        assert report["same_start"], "DDP broadcasts rank 0's weights to every rank"
        # Gradients 2 and 4 averaged over the two ranks.
        assert report["grad"] == [3.0, 3.0, 3.0, 3.0]
