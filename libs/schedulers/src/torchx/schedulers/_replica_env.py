"""The environment of one replica: built here, the same way, for every scheduler.

Precedence, lowest first:

1. ``defaults``: what the scheduler provides for the launch (``PYTHONUNBUFFERED``,
   ``MASTER_ADDR``/``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``, ...); a role may change these;
2. the role's ``env``, macros already filled in;
3. torchx's own variables: ``TORCHX_APP_ID``, ``TORCHX_ROLE_NAME``,
   ``TORCHX_REPLICA_ID`` and ``TORCHX_RANK0_HOST``. These always win, as
   ``TORCHX_RANK0_HOST`` does in pytorch/torchx: a replica can trust them to say who it is.

Values may be the scheduler's own expressions (``$(VAR)`` on Kubernetes,
``${SLURM_PROCID}`` in an sbatch script) when the value is only known on the node.

This module imports nothing but the standard library: the Ray driver, which runs on the
cluster, uses it too.
"""

from __future__ import annotations

from collections.abc import Mapping

TORCHX_APP_ID = "TORCHX_APP_ID"
TORCHX_ROLE_NAME = "TORCHX_ROLE_NAME"
TORCHX_REPLICA_ID = "TORCHX_REPLICA_ID"
TORCHX_RANK0_HOST = "TORCHX_RANK0_HOST"
TORCHX_VARIABLES = (TORCHX_APP_ID, TORCHX_ROLE_NAME, TORCHX_REPLICA_ID, TORCHX_RANK0_HOST)


def torchx_variables(
    *, app_id: str, role_name: str, replica_id: str, rank0_host: str
) -> dict[str, str]:
    """torchx's own variables for one replica (the top layer of ``replica_env``)."""
    return {
        TORCHX_APP_ID: app_id,
        TORCHX_ROLE_NAME: role_name,
        TORCHX_REPLICA_ID: replica_id,
        TORCHX_RANK0_HOST: rank0_host,
    }


def replica_env(
    role_env: Mapping[str, str],
    *,
    app_id: str,
    role_name: str,
    replica_id: str,
    rank0_host: str,
    defaults: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of one replica, with the precedence in this module's docstring."""
    env = dict(defaults) if defaults else {}
    env.update(role_env)
    env.update(
        torchx_variables(
            app_id=app_id, role_name=role_name, replica_id=replica_id, rank0_host=rank0_host
        )
    )
    return env


def launch_defaults(
    *,
    master_addr: str,
    master_port: int | str,
    rank: int | str,
    world_size: int,
    same_host: bool = False,
) -> dict[str, str]:
    """The rendezvous variables torch.distributed reads, for replica ``rank`` of a role of
    ``world_size`` single-process replicas (the bottom layer of ``replica_env``).

    ``rank`` is a number, or the backend's expression for it (``$(VC_TASK_INDEX)``) where
    one request serves every replica of the role.

    ``same_host``: all replicas share one host (local processes), so each is a local rank
    of one group rather than a group of its own.
    """
    return {
        "PYTHONUNBUFFERED": "1",
        "MASTER_ADDR": master_addr,
        "MASTER_PORT": str(master_port),
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "GROUP_RANK": "0" if same_host else str(rank),
        "ROLE_RANK": str(rank),
        "ROLE_WORLD_SIZE": str(world_size),
        "LOCAL_RANK": str(rank) if same_host else "0",
        "LOCAL_WORLD_SIZE": str(world_size) if same_host else "1",
    }
