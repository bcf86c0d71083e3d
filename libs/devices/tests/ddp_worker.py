"""One torchrun worker: wrap a torchx module with DistributedDataParallel, train one step and
write what it saw to <out_dir>/rank<RANK>.json for the test to read. ``--cpu`` asks for
gloo on the CPU explicitly; without it the helper chooses by itself."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

import torchx.devices as tx
import torchx.nn as nnx


class Net(nnx.Module):
    def __init__(self) -> None:
        self.fc = nn.Linear(4, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)  # type: ignore[no-any-return]


def main(out_dir: Path, force_cpu: bool) -> None:
    env = tx.distributed_env()
    torch.manual_seed(env.rank)  # different start weights: DDP must broadcast rank 0's
    if force_cpu:  # on a GPU machine the defaults would pick nccl and cuda:LOCAL_RANK
        model = tx.DistributedDataParallel(Net(), backend="gloo", device="cpu")
    else:
        model = tx.DistributedDataParallel(Net())
    start = model.module.fc.weight.detach().clone()
    gathered = [torch.zeros_like(start) for _ in range(env.world_size)]
    dist.all_gather(gathered, start)
    # Each rank's gradient is 2 * (rank + 1) everywhere; DDP averages them.
    model(torch.full((2, 4), float(env.rank + 1))).sum().backward()
    grad = model.module.fc.weight.grad
    assert grad is not None
    report = {
        "env": [env.local_rank, env.rank, env.world_size],
        "backend": dist.get_backend(),
        "device": str(start.device),
        "same_start": all(torch.equal(g, gathered[0]) for g in gathered),
        "grad": grad.flatten().tolist(),
    }
    (out_dir / f"rank{env.rank}.json").write_text(json.dumps(report))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(Path(sys.argv[1]), force_cpu=sys.argv[2:] == ["--cpu"])
