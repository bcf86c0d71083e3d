"""Each replica of a role: the role with its macros filled in, and its environment.

Every scheduler builds its requests from these, so that macros and the replica environment
(``replica_env``'s precedence, ``launch_defaults``' variables) mean the same everywhere.
A backend that sends one request for all replicas of a role (a Volcano task, an ``srun``
step) passes its own expression for the replica's index as ``replica_id`` and gets one
``Replica`` for the role.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from torchx.schedulers._replica_env import TORCHX_RANK0_HOST, launch_defaults, replica_env
from torchx.specs import Role, macros


@dataclass(frozen=True)
class Replica:
    """Replica ``replica_id`` of ``role`` (a number as text, or the backend's expression):
    ``filled`` is the role with its macros filled in, ``env`` the replica's environment."""

    role: Role
    replica_id: str
    filled: Role
    env: dict[str, str]

    @property
    def k(self) -> int:
        """The replica's index, where ``replica_id`` is a number."""
        return int(self.replica_id)

    @property
    def argv(self) -> list[str]:
        return [self.filled.entrypoint, *self.filled.args]


def role_replicas(
    role: Role,
    *,
    app_id: str,
    rank0_host: str,
    master_port: int | str | None,
    img_root: str = "",
    replica_id: str | None = None,
    same_host: bool = False,
    defaults: Mapping[str, str] | None = None,
    values: macros.Values | None = None,
) -> Iterator[Replica]:
    """The replicas of ``role`` in order; or, given ``replica_id`` (a number as text, or the
    backend's expression for it), that one replica.

    ``rank0_host`` is where replica 0 of the app's first role runs (``MASTER_ADDR``), with
    ``master_port`` its rendezvous port; ``master_port=None`` leaves the launch variables
    out, for a backend that adds them where the replica runs. ``defaults`` sit below
    everything else (variables copied from the submitting environment). ``values`` are
    the macro values of a backend that fills every replica alike (its constant placeholders
    for expansions made where the replica runs); by default each replica's own.
    """
    ids = [replica_id] if replica_id is not None else [str(k) for k in range(role.num_replicas)]
    for rid in ids:
        filled = (
            values
            or macros.Values(
                img_root=img_root, app_id=app_id, replica_id=rid, rank0_env=TORCHX_RANK0_HOST
            )
        ).apply(role)
        base = dict(defaults) if defaults else {}
        if master_port is not None:
            base.update(
                launch_defaults(
                    master_addr=rank0_host,
                    master_port=master_port,
                    rank=rid,
                    world_size=role.num_replicas,
                    same_host=same_host,
                )
            )
        env = replica_env(
            filled.env,
            app_id=app_id,
            role_name=role.name,
            replica_id=rid,
            rank0_host=rank0_host,
            defaults=base,
        )
        yield Replica(role, rid, filled, env)


__all__ = ["Replica", "role_replicas"]
