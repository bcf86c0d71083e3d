"""torchx.distributed: the rank helpers alone, in a plain process, and under torchrun."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import torchx.distributed as d

_VARS = (
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
)  # fmt: skip


def _expected_device(local_rank: int, n: int) -> str:
    """What init_pg("auto") gives a rank of a group of ``n`` on one node: a GPU each, or
    the CPU."""
    gpus = torch.cuda.device_count() if d.has_cuda_devices() else 0
    nccl = torch.distributed.is_nccl_available()
    return f"cuda:{local_rank}" if nccl and 0 < n <= gpus else "cpu"


WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    import torch
    import torchx.distributed as d

    out = Path(sys.argv[1])
    device = d.init_pg(backend="auto")
    marker = out / "first"
    with d.on_rank0_first():
        if d.is_rank0():
            time.sleep(0.5)  # the others would write before this, were they not held back
            marker.write_text("rank0")
        seen = marker.read_text() if marker.exists() else "none"
    with d.on_local_rank0_first():
        pass
    t = torch.ones(1, device=device)
    torch.distributed.all_reduce(t)
    (out / f"rank{d.rank()}.json").write_text(json.dumps({
        "rank": d.rank(), "world": d.world_size(), "local": d.local_rank(),
        "rank0": d.is_rank0(), "local0": d.is_local_rank0(), "seen": seen,
        "device": str(device), "local_device": str(d.local_device()), "sum": t.item(),
    }))
    torch.distributed.destroy_process_group()
    """
)


@pytest.fixture
def plain(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("plain")
def test_a_plain_process_is_rank_0_of_1(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (d.rank(), d.world_size(), d.local_rank()) == (0, 1, 0)
    assert d.is_rank0() and d.is_local_rank0()
    expected = "cuda" if d.has_cuda_devices() else "cpu"
    assert d.local_device() == torch.device(expected)
    with d.on_rank0_first(), d.on_local_rank0_first():
        pass
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert (d.rank(), d.world_size(), d.local_rank()) == (3, 4, 1)
    assert not d.is_rank0() and not d.is_local_rank0()
    # (which GPU local rank 1 gets depends on the GPUs it sees: see the test below)
    with pytest.raises(ValueError, match="init_pg backend"):
        d.init_pg(backend="mpi")  # type: ignore[arg-type]


@pytest.mark.usefixtures("plain")
def test_init_pg_makes_a_group_of_one_outside_torchrun(tmp_path: Path) -> None:
    script = tmp_path / "w.py"
    script.write_text(WORKER)
    env = {k: v for k, v in os.environ.items() if k not in _VARS}
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    import json

    got = json.loads((tmp_path / "rank0.json").read_text())
    assert (got["rank"], got["world"], got["sum"], got["seen"]) == (0, 1, 1.0, "rank0")
    assert got["device"] == got["local_device"] == _expected_device(0, 1)
    # In a group of one, local rank 0 is certain: no warning that it is a guess.
    assert "LOCAL_RANK is not set" not in run.stderr


def _gpus(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    """Make this process see ``count`` GPUs (no test here touches a real one)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.distributed, "is_nccl_available", lambda: True)


@pytest.mark.usefixtures("plain")
def test_auto_takes_nccl_only_when_the_process_has_a_gpu_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _gpus(monkeypatch, 2)
    assert d.auto_backend() == "nccl"  # a process on its own: one GPU is enough
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")  # replicas given their GPUs by a scheduler
    assert d.auto_backend() == "nccl"
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "job")  # torchrun's 4 processes see the same 2
    assert d.auto_backend() == "gloo"
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert d.auto_backend() == "nccl"
    for bad in ("two", "0"):
        monkeypatch.setenv("LOCAL_WORLD_SIZE", bad)
        with pytest.raises(ValueError, match=f"LOCAL_WORLD_SIZE='{bad}' is not a whole number"):
            d.auto_backend()
    _gpus(monkeypatch, 0)
    assert d.auto_backend() == "gloo"


@pytest.mark.usefixtures("plain")
def test_a_process_given_its_own_gpus_counts_its_local_rank_among_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCAL_RANK", "3")
    _gpus(monkeypatch, 4)  # it sees the node's four
    assert d.local_cuda_device() == torch.device("cuda", 3)
    _gpus(monkeypatch, 1)  # CUDA_VISIBLE_DEVICES gave it one, renumbered from 0
    assert d.local_cuda_device() == torch.device("cuda", 0)
    _gpus(monkeypatch, 0)
    assert d.local_cuda_device() == torch.device("cuda", 3)


@pytest.mark.usefixtures("plain")
def test_nccl_without_a_gpu_for_each_process_is_refused_before_any_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _gpus(monkeypatch, 0)
    with pytest.raises(ValueError, match=r"needs a GPU for each process, but it sees 0 GPU\(s\)"):
        d.init_pg(backend="nccl")
    _gpus(monkeypatch, 1)
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "job")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    with pytest.raises(ValueError) as err:
        d.init_pg(backend="nccl")
    assert "2 processes on this node see 1 GPU(s)" in str(err.value)
    assert "backend='gloo'" in str(err.value)
    assert not torch.distributed.is_initialized()


@pytest.mark.slow
@pytest.mark.usefixtures("plain")
def test_under_torchrun_with_two_processes(tmp_path: Path) -> None:
    import json

    script = tmp_path / "w.py"
    script.write_text(WORKER)
    torchrun = str(Path(sys.executable).with_name("torchrun"))
    env = {k: v for k, v in os.environ.items() if k not in _VARS}
    run = subprocess.run(
        [torchrun, "--standalone", "--nnodes=1", "--nproc-per-node=2", str(script), str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    for r, got in enumerate(ranks):
        assert (got["rank"], got["world"], got["local"]) == (r, 2, r)
        assert (got["rank0"], got["local0"]) == (r == 0, r == 0)
        assert got["sum"] == 2.0
        # Rank 1 entered its block only after rank 0 had written the marker.
        assert got["seen"] == "rank0"
        # Two ranks share no GPU: nccl on a node with two or more, else gloo on the CPU.
        assert got["device"] == got["local_device"] == _expected_device(r, 2)
