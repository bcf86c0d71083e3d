"""Apps on local_cwd with real GPUs: each ``dist.ddp`` replica gets its own
CUDA_VISIBLE_DEVICES slice and ``torchx.distributed.init_pg`` picks its backend from what the
ranks were given; a function submitted with a GPU computes there and its CUDA tensor comes back.

The exact requests are checked without a GPU in libs/schedulers/tests
(``test_cuda_visible_devices_per_replica``); here they run, and skip where no GPU is.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
import torch
from torchx_test_fixtures_ports import free_loopback_port

from torchx.runner import Executor, get_runner
from torchx.specs import AppState, Resource

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs an NVIDIA GPU with CUDA; this machine has none"
)

TRAINER = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    import torch
    import torch.distributed as dist
    from torchx.distributed import init_pg, local_rank, rank

    device = init_pg()
    total = torch.full((1,), float(rank() + 1), device=device)
    dist.all_reduce(total)
    Path(sys.argv[1], f"rank{rank()}.json").write_text(json.dumps({
        "visible": os.environ.get("CUDA_VISIBLE_DEVICES"), "gpus": torch.cuda.device_count(),
        "backend": dist.get_backend(), "device": str(device), "local": local_rank(),
        "sum": total.item(), "on": str(total.device),
    }))
    dist.destroy_process_group()
    """
)


@pytest.mark.slow
@pytest.mark.usefixtures("run_in_tmp_path")
@pytest.mark.parametrize(
    ("procs", "backend", "device"),
    [
        (1, "nccl", "cuda:0"),  # one process, one GPU of its own
        (2, "gloo", "cpu"),  # two processes, one GPU: NCCL would refuse, so the CPU
    ],
)
def test_ddp_replica_gets_its_gpu_slice_and_a_backend_that_fits(
    tmp_path: Path, procs: int, backend: str, device: str
) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAINER)
    out = tmp_path / "ranks"
    out.mkdir()
    args = ["-j", f"1x{procs}", "--gpu", "1", "--rdzv_port", str(free_loopback_port())]
    with get_runner() as runner:
        handle = runner.run_component(
            "dist.ddp",
            [*args, "--script", str(script), "--", str(out)],
            scheduler="local_cwd",
            cfg={"auto_set_cuda_visible_devices": True},
        )
        status = runner.wait(handle, wait_interval=0.2, timeout=300)
        log = "".join(runner.log_lines(handle, "train", 0))
    assert status is not None and status.state == AppState.SUCCEEDED, log
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(procs)]
    for r, got in enumerate(ranks):
        # The replica asked for one GPU: it sees exactly one, whichever the host has.
        assert got["gpus"] == 1 and got["visible"] is not None, got
        assert len(got["visible"].split(",")) == 1
        assert (got["backend"], got["device"], got["local"]) == (backend, device, r)
        assert got["on"] == device
        assert got["sum"] == sum(range(1, procs + 1))


def gpu_sum(n: int) -> tuple[str | None, int, torch.Tensor]:
    """Runs in the app: what it was given, and a sum computed on its GPU."""
    values = torch.arange(n, dtype=torch.float64, device="cuda")
    return os.environ.get("CUDA_VISIBLE_DEVICES"), torch.cuda.device_count(), values.sum()


@pytest.mark.slow
@pytest.mark.usefixtures("run_in_tmp_path")
def test_a_function_runs_on_its_gpu_and_its_cuda_tensor_comes_back() -> None:
    pytest.importorskip("torchx.runtime.function", reason="needs torchx-runner[function]")
    one_gpu = Resource(cpu=1, gpu=1, memMB=1024)
    cfg = {"auto_set_cuda_visible_devices": True}
    with Executor("local_cwd", cfg, one_gpu, poll_interval=0.2) as executor:
        visible, gpus, total = executor.submit(gpu_sum, 1000).result(timeout=300)
    assert visible is not None and len(visible.split(",")) == 1 and gpus == 1
    assert total.device.type == "cuda" and total.item() == 499500.0
