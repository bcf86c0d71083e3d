"""One replica of a Ray job, as ``ray_driver`` runs it."""

from __future__ import annotations

from dataclasses import dataclass, field

from torchx.schedulers._replica_env import TORCHX_RANK0_HOST


@dataclass
class RayActor:
    """A replica: ``command`` (argv) run with ``env`` in an actor of ``num_cpus`` CPUs and
    ``num_gpus`` GPUs. Replicas of one role share ``name``; ``min_replicas`` is accepted for
    0.7's files (the driver starts every replica)."""

    name: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    num_cpus: int = 1
    num_gpus: int = 0
    min_replicas: int | None = None


__all__ = ["TORCHX_RANK0_HOST", "RayActor"]
