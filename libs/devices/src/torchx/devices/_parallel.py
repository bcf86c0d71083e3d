"""Data parallel wrappers that read their devices from the scope or from torchrun."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import torch
from torch import nn

from torchx.devices._scope import STATE

M = TypeVar("M", bound=nn.Module)


def DataParallel(module: M, *, dim: int = 0) -> M | nn.DataParallel[M]:
    """Spread ``module`` over the GPUs of the current scope.

    In a scope given a list of GPUs or ``"cuda:all"`` this returns torch's
    :class:`torch.nn.DataParallel` over those GPUs, with the module on the first of them.
    In a single-device scope the module is moved there and returned as is; outside every
    scope it is returned untouched. Either way the result is called like the module.
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module={module!r} is not a torch.nn.Module; pass the model to wrap")
    scope = STATE.current
    if scope is None:
        return module
    if not scope.device_ids:
        return module.to(scope.device)
    ids = list(scope.device_ids)
    return nn.DataParallel(module.to(scope.device), device_ids=ids, output_device=ids[0], dim=dim)


@dataclass(frozen=True)
class DistributedEnv:
    """What torchrun tells each worker about its place in the job."""

    local_rank: int
    rank: int
    world_size: int


_VARS = ("LOCAL_RANK", "RANK", "WORLD_SIZE")


def distributed_env(environ: Mapping[str, str] | None = None) -> DistributedEnv:
    """Read ``LOCAL_RANK``, ``RANK`` and ``WORLD_SIZE`` as set by ``torchrun``."""
    env = os.environ if environ is None else environ
    values: dict[str, int] = {}
    for name in _VARS:
        raw = env.get(name)
        if raw is None:
            raise RuntimeError(
                f"environment variable {name} is not set; start the script with torchrun "
                "(python -m torch.distributed.run), which sets LOCAL_RANK, RANK and WORLD_SIZE"
            )
        try:
            values[name] = int(raw)
        except ValueError:
            raise ValueError(
                f"environment variable {name}={raw!r} is not an integer; "
                "accepted: a whole number >= 0, as torchrun sets it"
            ) from None
        if values[name] < 0:
            raise ValueError(f"environment variable {name}={raw!r} is negative; accepted: >= 0")
    if values["WORLD_SIZE"] < 1 or values["RANK"] >= values["WORLD_SIZE"]:
        raise ValueError(
            f"environment variables RANK={values['RANK']} and WORLD_SIZE={values['WORLD_SIZE']} "
            "disagree; accepted: 0 <= RANK < WORLD_SIZE"
        )
    return DistributedEnv(values["LOCAL_RANK"], values["RANK"], values["WORLD_SIZE"])


def DistributedDataParallel(
    module: nn.Module,
    *,
    backend: str | None = None,
    device: torch.device | str | None = None,
    **ddp_kwargs: Any,
) -> nn.parallel.DistributedDataParallel:
    """Wrap ``module`` in torch's DistributedDataParallel for a worker started by torchrun.

    Joins the default process group if none exists yet (``backend``, else
    ``torchx.distributed.auto_backend()``: ``nccl`` when each process on the node has a GPU
    of its own, else ``gloo``; torchrun's ``MASTER_ADDR``/``MASTER_PORT`` give the
    rendezvous), then puts the module on ``device`` when given, else on its GPU
    (``torchx.distributed.local_cuda_device()``) in an NCCL group or where the process has
    a GPU of its own, else on the CPU. Extra keyword arguments go
    to torch's DistributedDataParallel.
    """
    import torch.distributed as dist

    from torchx.distributed import auto_backend, local_cuda_device

    if not isinstance(module, nn.Module):
        raise TypeError(f"module={module!r} is not a torch.nn.Module; pass the model to wrap")
    env = distributed_env()
    auto = auto_backend()
    if not dist.is_initialized():
        for name in ("MASTER_ADDR", "MASTER_PORT"):
            if not os.environ.get(name):
                raise RuntimeError(
                    f"environment variable {name} is not set; torchrun sets it, or "
                    "call torch.distributed.init_process_group yourself first"
                )
        chosen = backend or auto
        dist.init_process_group(chosen, rank=env.rank, world_size=env.world_size)
    if device is None:
        # An NCCL group needs its ranks on GPUs; otherwise a rank takes a GPU only where
        # it has one of its own (the rule auto_backend follows).
        on_gpu = dist.get_backend() == "nccl" or auto == "nccl"
        target = local_cuda_device() if on_gpu else torch.device("cpu")
    else:
        target = torch.device(device)
    if target.type == "cuda":
        torch.cuda.set_device(target)
        module = module.to(target)
        index = target.index
        ddp_kwargs.setdefault("device_ids", [index])
        ddp_kwargs.setdefault("output_device", index)
    else:
        module = module.to(target)
    return nn.parallel.DistributedDataParallel(module, **ddp_kwargs)
