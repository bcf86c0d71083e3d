"""Run a list of :class:`RayActor` replicas on a Ray cluster as one job.

``python -m torchx.schedulers.ray.ray_driver [ACTORS_JSON]`` (default ``actors.json`` in the
working directory, as written by ``ray_scheduler.serialize``) reserves every replica's
resources at once, runs each replica's command in its own actor with the rank and
master-address variables set, and exits with the failed replica's exit code (0 when all
succeed). It is the driver the ray scheduler runs (``torchx.schedulers._ray_driver``),
given the replicas in 0.7's form: replicas with the same ``name`` form one role.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from torchx.schedulers._ray_driver import Driver
from torchx.schedulers._replica_env import TORCHX_RANK0_HOST
from torchx.schedulers.ray.ray_common import RayActor


@dataclass
class RayResult:
    """What a step of a driver loop produced, for the replica (actor) ``id``.

    0.7's driver passed these between its loop steps; this driver reports progress as
    ``TORCHX_EVENT`` lines instead, so it makes none. Kept for code that imports them.
    """

    id: str


@dataclass
class TaskCompleted(RayResult):
    """A replica's command ended."""


@dataclass
class CommandActorScheduled(RayResult):
    """A replica's actor was placed and started."""


@dataclass
class ActorInfo:
    """A started replica: its placement group, its spec and its actor handle."""

    pg: Any
    replica: RayActor
    actor: Any


def load_actor_json(filename: str) -> list[RayActor]:
    """The replicas in ``filename``: a JSON list of RayActor fields, or that list encoded
    once more as a JSON string (the form 0.7's ``serialize`` wrote)."""
    data: Any = json.loads(Path(filename).read_text())
    if isinstance(data, str):
        data = json.loads(data)
    if not isinstance(data, list):
        raise ValueError(f"{filename}: expected a JSON list of replicas, got {type(data).__name__}")
    return [RayActor(**item) for item in data]


def create_placement_group_async(replicas: list[RayActor]) -> Any:
    """A Ray placement group with one bundle per replica (its CPUs and GPUs), spread over
    the nodes; returned at once, before Ray has placed it (``pg.ready()`` waits)."""
    from ray.util.placement_group import placement_group

    bundles = [{"CPU": float(r.num_cpus), "GPU": float(r.num_gpus)} for r in replicas]
    return placement_group(bundles, strategy="SPREAD")


def _config(replicas: list[RayActor]) -> dict[str, Any]:
    roles: dict[str, dict[str, Any]] = {}
    for r in replicas:
        role = roles.setdefault(
            r.name,
            {
                "name": r.name,
                "num_cpus": r.num_cpus,
                "num_gpus": r.num_gpus,
                "memory": 0,
                "max_retries": 0,
                "retry_policy": "APPLICATION",
                "replicas": [],
            },
        )
        role["replicas"].append({"argv": list(r.command), "env": dict(r.env)})
    return {"app_id": "", "placement_strategy": "SPREAD", "roles": list(roles.values())}


class RayDriver:
    """Runs ``replicas`` (``run()`` returns the job's exit code)."""

    def __init__(self, replicas: list[RayActor]) -> None:
        self.replicas = replicas

    def run(self) -> int:
        return Driver(_config(self.replicas)).run()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else "actors.json"
    return RayDriver(load_actor_json(path)).run()


def to_json(replicas: list[RayActor]) -> str:
    """``replicas`` as the JSON ``load_actor_json`` reads."""
    return json.dumps([asdict(r) for r in replicas])


__all__ = [
    "TORCHX_RANK0_HOST",
    "ActorInfo",
    "CommandActorScheduled",
    "RayDriver",
    "RayResult",
    "TaskCompleted",
    "create_placement_group_async",
    "load_actor_json",
    "main",
    "to_json",
]


if __name__ == "__main__":
    sys.exit(main())
