"""A small DDP trainer for ``torchx run dist.ddp``: fits y = 3x + 1 on CPU with gloo.

    torchx run dist.ddp -j 2 --script examples/cli/ddp_train.py -- --steps 20 --out /tmp/ranks

Each rank trains on its own shard; DDP averages the gradients, so every rank ends with
the same weights. With ``--out DIR`` each rank writes ``DIR/rank{N}.json`` when done.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--out", default="")
    ns = parser.parse_args()

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)  # a different shard of data on each rank
    x = torch.randn(256, 1)
    y = 3 * x + 1

    torch.manual_seed(0)  # the same initial weights everywhere
    model = DistributedDataParallel(torch.nn.Linear(1, 1))
    opt = torch.optim.SGD(model.parameters(), lr=ns.lr)
    loss = torch.tensor(0.0)
    for _ in range(ns.steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    weight = model.module.weight.item()
    bias = model.module.bias.item()
    print(f"rank {rank}/{world}: loss={loss.item():.4f} w={weight:.3f} b={bias:.3f}", flush=True)
    if ns.out:
        out = Path(ns.out)
        out.mkdir(parents=True, exist_ok=True)
        result = {
            "rank": rank,
            "world_size": world,
            "loss": loss.item(),
            "weight": weight,
            "bias": bias,
            "local_rank": int(os.environ["LOCAL_RANK"]),
        }
        (out / f"rank{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
