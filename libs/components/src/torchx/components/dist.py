"""Distributed components: ``ddp`` (torchrun, elastic) and ``spmd`` (torchrun sized by ``--h``).

``-j`` says how many nodes and processes: ``M`` (one node, M processes), ``NxM`` (N nodes,
M processes each) or ``MIN:NxM`` (elastic: start once MIN nodes joined, up to N).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from torchx.components._common import (
    IMAGE,
    fill_shared_arg_help,
    log_level_env,
    mounts_of,
    one_of,
    role_resource,
)
from torchx.specs import AppDef, Role, SpecsError, macros

__all__ = ["ddp", "get_role_name", "parse_nnodes", "spmd"]

# Variables that make distributed failures explain themselves, set by ``--debug``.
DEBUG_ENV = {
    "TORCH_DISTRIBUTED_DEBUG": "DETAIL",
    "TORCH_CPP_LOG_LEVEL": "INFO",
    "TORCH_SHOW_CPP_STACKTRACES": "1",
    "NCCL_DEBUG": "INFO",
    "NCCL_DESYNC_DEBUG": "1",
    "CUDA_LAUNCH_BLOCKING": "1",
    "LOGLEVEL": "INFO",
}

_J = re.compile(r"^(?:(?:(\d+):)?(\d+)x)?(\d+)$")


@dataclass(frozen=True)
class Topology:
    """Nodes and processes per node parsed from ``-j``."""

    min_nnodes: int
    nnodes: int
    nproc_per_node: int

    @property
    def nnodes_arg(self) -> str:
        """torchrun's ``--nnodes``: ``N`` or elastic ``MIN:N``."""
        if self.min_nnodes == self.nnodes:
            return str(self.nnodes)
        return f"{self.min_nnodes}:{self.nnodes}"


def parse_j(j: str, where: str = "dist.ddp -j") -> Topology:
    """Parse ``M``, ``NxM`` or ``MIN:NxM`` (every number at least 1, MIN at most N)."""
    match = _J.match(j.strip())
    if not match:
        raise SpecsError(where, j, "expected M, NxM or MIN:NxM (e.g. 2, 2x4, 1:2x4)")
    lo, n, m = match.groups()
    nnodes = int(n) if n else 1
    min_nnodes = int(lo) if lo else nnodes
    nproc = int(m)
    if nnodes < 1 or nproc < 1 or min_nnodes < 1:
        raise SpecsError(where, j, "every count must be at least 1")
    if min_nnodes > nnodes:
        raise SpecsError(where, j, f"the minimum {min_nnodes} exceeds the maximum {nnodes} nodes")
    return Topology(min_nnodes, nnodes, nproc)


def parse_nnodes(j: str) -> tuple[int, int, int, str]:
    """``-j`` as pytorch/torchx's ``parse_nnodes`` gives it: ``(min_nnodes, max_nnodes,
    nproc_per_node, nnodes)``, the last being torchrun's ``--nnodes`` text (``N`` or ``MIN:N``)."""
    topology = parse_j(j, "-j")
    return topology.min_nnodes, topology.nnodes, topology.nproc_per_node, topology.nnodes_arg


DEFAULT_EXPERIMENT = "default-experiment"


def split_name(name: str | None, default_run: str) -> tuple[str, str]:
    """``EXPERIMENT/RUN`` -> ``(experiment, run)``.

    Either side may be empty (``exp/``, ``/run``, ``/``), as may the whole name: the run
    then takes ``default_run`` (the script or module name), the experiment
    ``default-experiment``. A name without ``/`` is the run's.
    """
    experiment, sep, run = (name or "").partition("/")
    if not sep:
        experiment, run = "", experiment
    return experiment or DEFAULT_EXPERIMENT, run or default_run


def _program(script: str | None, m: str | None, where: str) -> tuple[list[str], str]:
    kind, target = one_of({"script": script, "m": m}, where)
    if kind == "m":
        return ["-m", target], target.rpartition(".")[2]
    return [target], os.path.splitext(os.path.basename(target))[0] or "trainer"


def _torchrun_role(
    *,
    name: str | None,
    program: list[str],
    role_name: str,
    script_args: tuple[str, ...],
    topology: Topology,
    image: str,
    h: str | None,
    cpu: float,
    gpu: int,
    memMB: int,
    env: dict[str, str] | None,
    max_retries: int,
    rdzv_backend: str,
    rdzv_port: int,
    mounts: list[str] | None,
    debug: bool,
    where: str,
    tee: int | None = None,
    launcher: tuple[str, ...] = ("torchrun",),
) -> AppDef:
    if not 0 < rdzv_port < 65536:
        raise SpecsError(f"{where} --rdzv_port", rdzv_port, "expected a port from 1 to 65535")
    if max_retries < 0:
        raise SpecsError(f"{where} --max_retries", max_retries, "expected 0 or more")
    experiment, run = split_name(name, role_name)
    role_env = {
        # what the tracking library reads as the experiment a run belongs to
        "TORCHX_TRACKING_EXPERIMENT_NAME": experiment,
        **log_level_env(DEBUG_ENV if debug else None),
        **(env or {}),
    }
    torchrun = [
        "--nnodes",
        topology.nnodes_arg,
        "--nproc_per_node",
        str(topology.nproc_per_node),
        "--rdzv_backend",
        rdzv_backend,
        "--rdzv_id",
        macros.app_id,
        # ``--tee`` copies each process's output to the console, each line prefixed with
        # ``[local_rank]:`` (an empty ``--role`` keeps the prefix that short, as
        # pytorch/torchx's ddp does)
        *(["--tee", str(tee), "--role", ""] if tee is not None else []),
    ]
    if topology.nnodes == 1:
        # One node: every process is local, so rendezvous on loopback needs no shell, and
        # port 0 lets the store take a free port, so that two single-node apps started
        # together on one host do not collide (``--rdzv_port`` is for several nodes).
        entrypoint = launcher[0]
        args = [
            *launcher[1:],
            *torchrun,
            "--rdzv_endpoint",
            "localhost:0",
            # static rendezvous assigns ranks by node: say which this one is, as with
            # several nodes (torchrun's default is the same 0)
            *(["--node_rank", "0"] if rdzv_backend == "static" else []),
            *program,
            *script_args,
        ]
    else:
        # Several nodes meet at replica 0, whose address the scheduler puts in an env var
        # whose name is only known at launch: a shell expands it (localhost when unset).
        import shlex

        endpoint = f"$${{{macros.rank0_env}:=localhost}}:{rdzv_port}"
        quoted = " ".join(shlex.quote(a) for a in [*program, *script_args])
        line = " ".join(
            [
                *(shlex.quote(a) for a in launcher),
                # the app id macro is filled in before the shell reads the line
                *(a if a == macros.app_id else shlex.quote(a) for a in torchrun),
                "--rdzv_endpoint",
                endpoint,  # unquoted: the shell expands it
                # only static rendezvous reads it (torchrun warns on every other node
                # otherwise), as in pytorch/torchx
                *(["--node_rank", macros.replica_id] if rdzv_backend == "static" else []),
            ]
        )
        entrypoint = "bash"
        args = ["-c", f"{line} {quoted}"]
    return AppDef(
        name=run,
        roles=[
            Role(
                name=role_name,
                image=image,
                entrypoint=entrypoint,
                args=args,
                num_replicas=topology.nnodes,
                min_replicas=topology.min_nnodes
                if topology.min_nnodes != topology.nnodes
                else None,
                max_retries=max_retries,
                resource=role_resource(h, cpu, gpu, memMB, where=where),
                env=role_env,
                port_map={"c10d": rdzv_port},
                mounts=mounts_of(mounts),
            )
        ],
    )


def ddp(
    *script_args: str,
    script: str | None = None,
    m: str | None = None,
    image: str = IMAGE,
    name: str | None = "/",
    h: str | None = None,
    cpu: float = 2,
    gpu: int = 0,
    memMB: int = 1024,
    j: str = "1x2",
    env: dict[str, str] | None = None,
    max_retries: int = 0,
    rdzv_port: int = 29500,
    rdzv_backend: str = "c10d",
    mounts: list[str] | None = None,
    debug: bool = False,
    tee: int = 3,
) -> AppDef:
    """Distributed data parallel training under torchrun (elastic when -j has a minimum).

    torchrun's log level, ``LOGLEVEL``, is the one ``torchx`` was started with, else INFO
    with ``--debug``, else WARNING; ``--env LOGLEVEL=...`` sets it outright.

    Args:
        script_args: arguments passed to the script or module
        script: the training script to run
        m: the training module to run, as with python -m
        name: EXPERIMENT/RUN, /RUN, EXPERIMENT/ or RUN: the app is named RUN (default:
            the script or module name), the experiment is passed to the tracking library
        j: nodes and processes: M, NxM or MIN:NxM (e.g. 2, 2x4, 1:2x4)
        rdzv_port: the port of the rendezvous store on the first node
        rdzv_backend: torchrun's rendezvous backend (c10d, etcd, static)
        debug: set the distributed debug variables (TORCH_DISTRIBUTED_DEBUG, NCCL_DEBUG, ...)
        tee: which streams each process also writes to the console: 0 none, 1 stdout,
            2 stderr, 3 both
    """
    program, default_name = _program(script, m, "dist.ddp program")
    if tee not in (0, 1, 2, 3):
        raise SpecsError(
            "dist.ddp --tee", tee, "expected 0 (none), 1 (stdout), 2 (stderr), 3 (both)"
        )
    return _torchrun_role(
        name=name,
        role_name=default_name,
        program=program,
        script_args=script_args,
        topology=parse_j(j),
        image=image,
        h=h,
        cpu=cpu,
        gpu=gpu,
        memMB=memMB,
        env=env,
        max_retries=max_retries,
        rdzv_backend=rdzv_backend,
        rdzv_port=rdzv_port,
        mounts=mounts,
        debug=debug,
        where="dist.ddp",
        tee=tee,
    )


def spmd(
    *script_args: str,
    script: str | None = None,
    m: str | None = None,
    image: str = IMAGE,
    name: str | None = "/",
    h: str = "gpu.small",
    j: str = "1x1",
    env: dict[str, str] | None = None,
    max_retries: int = 0,
    rdzv_port: int = 29500,
    mounts: list[str] | None = None,
    debug: bool = False,
) -> AppDef:
    """Single program, multiple data: one process by default (-j 1x1); -j N runs N nodes,
    each with one process per GPU of --h. ``LOGLEVEL`` is set as ``dist.ddp`` sets it.

    Args:
        script_args: arguments passed to the script or module
        script: the program to run
        m: the module to run, as with python -m
        name: EXPERIMENT/RUN, /RUN, EXPERIMENT/ or RUN: the app is named RUN (default:
            the script or module name), the experiment is passed to the tracking library
        h: the named resource of each node; with -j N or MIN:N its GPU count (at least
            1) is the processes per node
        j: NxM or MIN:NxM (N nodes, M processes each; default 1x1: one process, as in
            pytorch/torchx), or N / MIN:N nodes running one process per GPU of h
        rdzv_port: the port of the rendezvous store on the first node
        debug: set the distributed debug variables
    """
    if "x" in j:
        topology = parse_j(j, "dist.spmd -j")
    else:
        nodes = re.match(r"^(?:(\d+):)?(\d+)$", j.strip())
        if not nodes:
            raise SpecsError(
                "dist.spmd -j", j, "expected N, MIN:N, NxM or MIN:NxM (e.g. 2, 1:4, 2x8)"
            )
        per_node = max(role_resource(h, where="dist.spmd").gpu, 1)
        lo = f"{nodes.group(1)}:" if nodes.group(1) else ""
        topology = parse_j(f"{lo}{nodes.group(2)}x{per_node}", "dist.spmd -j")
    program, default_name = _program(script, m, "dist.spmd program")
    return _torchrun_role(
        name=name,
        role_name=default_name,
        program=program,
        script_args=script_args,
        topology=topology,
        image=image,
        h=h,
        cpu=-1,
        gpu=-1,
        memMB=-1,
        env=env,
        max_retries=max_retries,
        rdzv_backend="c10d",
        rdzv_port=rdzv_port,
        mounts=mounts,
        debug=debug,
        where="dist.spmd",
    )


def get_role_name(script: str | None, m: str | None) -> str:
    """The role name ``dist.ddp``/``dist.spmd`` give a program: the script's file name
    without extension, or the last part of module ``m``. Exactly one must be given."""
    return _program(script, m, "dist role name")[1]


fill_shared_arg_help(ddp, spmd, per="node")
