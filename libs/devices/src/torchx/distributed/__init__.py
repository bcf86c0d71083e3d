"""Rank helpers for apps, safe to call whether or not the process is distributed.

``rank()``, ``world_size()``, ``local_rank()`` answer from the default process group when it
is initialized, else from the variables ``torchrun`` (and every torchx scheduler) sets
(``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``), else as a single process (0, 1, 0). ``init_pg``
starts a process group in both cases, so one script runs under ``python`` and ``torchrun``::

    from torchx.distributed import init_pg, is_rank0, on_rank0_first

    device = init_pg()                 # "auto": nccl with GPUs, else gloo
    with on_rank0_first():             # rank 0 downloads, the others then read the cache
        data = load_dataset()

Imports nothing else of torchx; torch is its only dependency.
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import torch
import torch.distributed as dist

Backend = Literal["nccl", "gloo", "auto"]


def has_cuda_devices() -> bool:
    """True when torch is built with CUDA *and* this host has a CUDA device."""
    return bool(torch.cuda.is_available() and torch.cuda.device_count() > 0)


def local_rank() -> int:
    """This process's rank on its node: ``$LOCAL_RANK``, or 0 when it is not set.

    A process group of several processes without ``LOCAL_RANK`` (not started by torchrun
    or torchx) gets a warning, since 0 is then a guess.
    """
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    # In a group of one (``init_pg`` outside torchrun makes one) rank 0 is certain.
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        warnings.warn(
            "a process group is initialized but LOCAL_RANK is not set; taking local rank 0. "
            "Start the program with torchrun or torchx (or set LOCAL_RANK) for the real one",
            stacklevel=2,
        )
    return 0


def local_cuda_device() -> torch.device:
    """``cuda:<local rank>``, counted among the GPUs this process sees.

    A process that sees fewer GPUs than its local rank was given its own through
    ``CUDA_VISIBLE_DEVICES`` (as local_cwd's ``auto_set_cuda_visible_devices`` does), which
    renumbers them from 0: local rank 3 seeing one GPU gets ``cuda:0``.
    """
    index = local_rank()
    gpus = _visible_gpus()
    return torch.device("cuda", index % gpus if gpus else index)


def _visible_gpus() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def local_device() -> torch.device:
    """The device this process should put its model on: ``cuda:<local rank>`` in an NCCL
    process group, ``cpu`` in any other; without a process group ``cuda`` when the host
    has a GPU, else ``cpu``."""
    if dist.is_available() and dist.is_initialized():
        return local_cuda_device() if dist.get_backend() == "nccl" else torch.device("cpu")
    return torch.device("cuda") if has_cuda_devices() else torch.device("cpu")


def rank() -> int:
    """The global rank: from the process group, else ``$RANK``, else 0."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return int(os.environ.get("RANK", "0"))


def world_size() -> int:
    """The number of processes: from the process group, else ``$WORLD_SIZE``, else 1."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_rank0() -> bool:
    """Whether this is rank 0 (always, for a process that is not distributed)."""
    return rank() == 0


def is_local_rank0() -> bool:
    """Whether this is local rank 0: the one process per node for per-node work."""
    return local_rank() == 0


def _sharing_processes() -> int:
    """How many processes see this one's GPUs: torchrun's ``LOCAL_WORLD_SIZE`` for a
    process it started (its processes on a node all see the same GPUs), else 1 (a
    process started on its own may have been given GPUs of its own)."""
    if not dist.is_torchelastic_launched():
        return 1
    raw = os.environ.get("LOCAL_WORLD_SIZE", "1")
    try:
        count = int(raw)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(
            f"environment variable LOCAL_WORLD_SIZE={raw!r} is not a whole number >= 1; "
            "torchrun sets it to the number of processes on the node"
        )
    return count


def auto_backend() -> Literal["nccl", "gloo"]:
    """The backend ``init_pg("auto")`` takes: ``nccl`` when torch has NCCL and this process
    has a GPU no other process of the job uses, else ``gloo``. NCCL refuses two ranks on
    one GPU, so ``torchrun --nproc-per-node=4`` on a one-GPU workstation runs on the CPU
    rather than failing, while four replicas given a GPU each run on NCCL."""
    gpus = _visible_gpus()
    if not (gpus and dist.is_nccl_available()):
        return "gloo"
    return "nccl" if _sharing_processes() <= gpus else "gloo"


def _claim_gpu() -> torch.device:
    """Make this process's own GPU (``local_cuda_device()``) its current one, or say in
    one line why it has none."""
    gpus, sharing = _visible_gpus(), _sharing_processes()
    if gpus == 0 or sharing > gpus:
        seen = f"{sharing} processes on this node see {gpus}" if sharing > 1 else f"it sees {gpus}"
        raise ValueError(
            f"init_pg backend: 'nccl' needs a GPU for each process, but {seen} GPU(s); "
            "pass backend='gloo', or 'auto' to take nccl only where each process has one"
        )
    device = local_cuda_device()
    torch.cuda.set_device(device)
    return device


def init_pg(backend: Backend = "auto", **kwargs: Any) -> torch.device:
    """Initialize the default process group and return this rank's device.

    Started by torchrun (or a torchx scheduler), it joins the job's group; started as a
    plain ``python`` process, it makes a group of one on a free local port. ``"auto"``
    picks ``nccl`` when torch has NCCL and the process has a GPU of its own (see
    ``auto_backend``), else ``gloo``. With ``nccl`` the process's current GPU is set to
    ``local_cuda_device()`` before the group starts (and the group is bound to it, unless
    ``kwargs`` name a ``device_id``), so collectives never guess their device. ``kwargs`` go
    to ``torch.distributed.init_process_group``. Returns that GPU for ``nccl``, else
    ``cpu``.
    """
    if backend not in ("nccl", "gloo", "auto"):
        raise ValueError(f"init_pg backend: got {backend!r}; expected 'nccl', 'gloo' or 'auto'")
    chosen = auto_backend() if backend == "auto" else backend
    device = torch.device("cpu")
    if chosen == "nccl":
        device = _claim_gpu()
        if "device_id" in inspect.signature(dist.init_process_group).parameters:
            kwargs.setdefault("device_id", device)  # torch 2.3 and later bind the group
    if dist.is_torchelastic_launched():
        dist.init_process_group(backend=chosen, **kwargs)
    else:
        # One process: a group of one, on a free port (port 0 lets the store choose).
        os.environ.setdefault("MASTER_ADDR", "localhost")
        os.environ.setdefault("MASTER_PORT", "0")
        dist.init_process_group(backend=chosen, rank=0, world_size=1, **kwargs)
    return device


@contextmanager
def _leaders_first(is_leader: Callable[[], bool]) -> Iterator[None]:
    """The leaders run the block, then meet the others at one barrier, after which the
    others run it; without a process group everyone just runs it."""
    grouped = dist.is_available() and dist.is_initialized()
    if grouped and not is_leader():
        dist.barrier()
    try:
        yield
    finally:
        if grouped and is_leader():
            dist.barrier()


@contextmanager
def on_rank0_first() -> Iterator[None]:
    """Run the block on rank 0 first, then on the other ranks together (one barrier).

    Without a process group it just runs the block.
    """
    with _leaders_first(is_rank0):
        yield


@contextmanager
def on_local_rank0_first() -> Iterator[None]:
    """Run the block on each node's local rank 0 first, then on that node's other ranks
    (the barrier is global, so every node's local rank 0 goes before the rest)."""
    with _leaders_first(is_local_rank0):
        yield


__all__ = [
    "Backend",
    "auto_backend",
    "has_cuda_devices",
    "init_pg",
    "is_local_rank0",
    "is_rank0",
    "local_cuda_device",
    "local_device",
    "local_rank",
    "on_local_rank0_first",
    "on_rank0_first",
    "rank",
    "world_size",
]
