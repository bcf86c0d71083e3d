"""The request a Ray dry run builds: the ``submit_job`` arguments and the driver config.

``build_job`` turns an AppDef and its resolved run options into a :class:`RayJob`: one
entry per replica (its command and environment, the macros filled), the resources each
role reserves, the runtime env (working directory, packages) and the metadata that
``describe`` and ``list`` read back. An app of one replica takes the ``direct`` path; the
rest the ``actors`` path (see ``ray_scheduler``).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torchx.schedulers._preemption_notes import RAY_NOTE
from torchx.schedulers._ray_direct import CONFIG_ENV
from torchx.schedulers._ray_requeue import resources_metadata
from torchx.schedulers._replica_env import TORCHX_RANK0_HOST
from torchx.schedulers._replicas import role_replicas
from torchx.schedulers.ids import make_unique
from torchx.schedulers.sweep_names import ENV_SWEEP_ID, ENV_SWEEP_INDEX, sweep_trial
from torchx.specs import AppDef, CfgVal, RetryPolicy, SpecsError

if TYPE_CHECKING:
    from torchx.schedulers.ray.ray_common import RayActor

DRIVER_MODULE = "torchx.schedulers._ray_driver"
DIRECT_MODULE = "torchx.schedulers._ray_direct"
# The two ways an app runs (``RayJob.path``): see the module docstring.
DIRECT = "direct"
ACTORS = "actors"
ENTRYPOINTS = {DIRECT: f"python -m {DIRECT_MODULE}", ACTORS: f"python -m {DRIVER_MODULE}"}
# Longer configs go in the runtime env: Linux caps one argument at 128 KiB. (A config on the
# command line keeps the runtime env free of per-job values, so Ray can give the actors
# workers it has already started.)
MAX_CONFIG_ARG = 100_000
PLACEMENT_STRATEGIES = ("PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD")
METADATA_KEY = "torchx_app"
# A sweep's trial: ``sweep-ID/INDEX``, for the list answer (the job's metadata is all of
# the job that ``list_jobs`` gives).
SWEEP_METADATA_KEY = "torchx_sweep"


@dataclass
class RayJob:
    """What ``schedule`` submits: the arguments of ``JobSubmissionClient.submit_job``.

    ``driver_config`` travels to the cluster as the entrypoint's JSON argument (or, when
    too long for a command line, in the runtime env's ``TORCHX_RAY_DRIVER_CONFIG``); it is
    kept here too so a dryrun can show it plainly.
    """

    address: str
    submission_id: str
    entrypoint: str
    runtime_env: dict[str, Any]
    metadata: dict[str, str]
    driver_config: dict[str, Any] = field(default_factory=dict)
    path: str = ACTORS
    # For the direct path, what Ray reserves for the entrypoint process itself:
    # ``entrypoint_num_cpus`` / ``entrypoint_num_gpus`` / ``entrypoint_memory``.
    entrypoint_resources: dict[str, float | int] = field(default_factory=dict)

    @property
    def app_id(self) -> str:
        if not self.address:  # a dry run without an address
            return self.submission_id
        return f"{strip_scheme(self.address)}-{self.submission_id}"

    @property
    def actors(self) -> list[RayActor]:
        """0.7's view of the request: one ``RayActor`` per replica the driver starts (none
        on the direct path, where the entrypoint itself is the app)."""
        from torchx.schedulers.ray.ray_common import RayActor

        return [
            RayActor(
                name=role["name"],
                command=list(replica["argv"]),
                env=dict(replica["env"]),
                num_cpus=role["num_cpus"],
                num_gpus=role["num_gpus"],
            )
            for role in self.driver_config.get("roles", [])
            for replica in role["replicas"]
        ]

    @property
    def working_dir(self) -> str | None:
        """0.7's name: the directory uploaded as the job's working directory, if any."""
        wd = self.runtime_env.get("working_dir")
        return str(wd) if wd is not None else None

    def submit_kwargs(self) -> dict[str, Any]:
        return {
            "submission_id": self.submission_id,
            "entrypoint": self.entrypoint,
            "runtime_env": self.runtime_env,
            "metadata": self.metadata,
            **self.entrypoint_resources,
        }


def format_job(job: RayJob) -> str:
    shown = json.loads(json.dumps(job.submit_kwargs()))
    placeholder = "<the driver config below, as JSON>"
    if CONFIG_ENV in shown["runtime_env"].get("env_vars", {}):
        shown["runtime_env"]["env_vars"][CONFIG_ENV] = placeholder
    else:
        shown["entrypoint"] = f"{ENTRYPOINTS[job.path]} {shlex.quote(placeholder)}"
    if job.path == DIRECT:
        how = (
            "path: direct (one replica: the job's entrypoint process runs its command; "
            "Ray reserves its resources through entrypoint_num_cpus/_num_gpus/_memory)"
        )
    else:
        n = sum(len(r["replicas"]) for r in job.driver_config["roles"])
        how = f"path: actors (a placement group of {n} bundles, one actor per replica)"
    return "\n".join(
        [
            how,
            RAY_NOTE,
            f"JobSubmissionClient({job.address!r}).submit_job(**",
            json.dumps(shown, indent=2, sort_keys=True),
            ")",
            "driver config:",
            json.dumps(job.driver_config, indent=2, sort_keys=True),
        ]
    )


def strip_scheme(address: str) -> str:
    return address.split("://", 1)[1] if "://" in address else address


def http_url(address: str) -> str:
    return address if "://" in address else f"http://{address}"


def _entrypoint_resources(role: dict[str, Any]) -> dict[str, float | int]:
    """A one-replica role's resources as ``submit_job`` reserves them for the entrypoint."""
    resources: dict[str, float | int] = {"entrypoint_num_cpus": role["num_cpus"]}
    if role["num_gpus"] > 0:
        resources["entrypoint_num_gpus"] = role["num_gpus"]
    if role["memory"] > 0:
        resources["entrypoint_memory"] = role["memory"]
    return resources


def runtime_env(cfg: Mapping[str, CfgVal], config_json: str | None) -> dict[str, Any]:
    """The job's runtime env: the driver config when too long for the command line, the
    working directory and the packages the run options name."""
    env: dict[str, Any] = {}
    if config_json is not None:
        env["env_vars"] = {CONFIG_ENV: config_json}
    working_dir = cfg.get("working_dir")
    if working_dir is not None and not str(working_dir).strip():
        # os.path.abspath("") is the current directory, which nobody asked to ship
        raise SpecsError(
            "run option 'working_dir'",
            working_dir,
            "give a local directory (-cfg working_dir=DIR), or leave the option out",
        )
    if working_dir is not None:
        path = os.path.abspath(os.path.expanduser(str(working_dir)))
        if not os.path.isdir(path):
            raise SpecsError(
                "run option 'working_dir'", working_dir, "give an existing local directory"
            )
        env["working_dir"] = path
    pip: list[str] = [str(p) for p in cfg.get("pip") or []]  # type: ignore[union-attr]
    requirements = cfg.get("requirements")
    if requirements is not None:
        try:
            with open(os.path.expanduser(str(requirements))) as f:
                lines = [ln.split("#", 1)[0].strip() for ln in f]
        except OSError as e:
            raise SpecsError(
                "run option 'requirements'",
                requirements,
                f"cannot read it ({e.strerror}); give a readable requirements.txt",
            ) from None
        pip.extend(ln for ln in lines if ln)
    if pip:
        env["pip"] = pip
    return env


def build_job(app: AppDef, cfg: Mapping[str, CfgVal], address: str) -> RayJob:
    """The job that runs ``app`` (valid) under the resolved run options ``cfg`` on the
    cluster at ``address`` ("" in a dry run without one)."""
    strategy = str(cfg.get("placement_strategy") or "PACK").upper()
    if strategy not in PLACEMENT_STRATEGIES:
        raise SpecsError(
            "run option 'placement_strategy'",
            cfg.get("placement_strategy"),
            f"expected one of {', '.join(PLACEMENT_STRATEGIES)}",
        )
    submission_id = make_unique(app.name)
    app_id = f"{strip_scheme(address)}-{submission_id}" if address else submission_id
    roles: list[dict[str, Any]] = []
    for role in app.roles:
        if role.num_replicas < 1:
            raise SpecsError(
                f"role {role.name!r} num_replicas", role.num_replicas, "give 1 or more"
            )
        # Rank 0's host and the launch variables are known only on the cluster: the
        # driver adds them.
        replicas = [
            {"argv": r.argv, "env": _without_rank0(r.env)}
            for r in role_replicas(
                role, app_id=app_id, rank0_host="", master_port=None, img_root="."
            )
        ]
        res = role.resource
        roles.append(
            {
                "name": role.name,
                "num_cpus": res.cpu if res.cpu > 0 else 1,
                "num_gpus": max(res.gpu, 0),
                "memory": max(res.memMB, 0) * 1024 * 1024,
                "max_retries": role.max_retries,
                "retry_policy": RetryPolicy(role.retry_policy).value,
                "replicas": replicas,
            }
        )
    config: dict[str, Any] = {"app_id": app_id, "placement_strategy": strategy, "roles": roles}
    config_json = json.dumps(config, separators=(",", ":"), sort_keys=True)
    in_argv = len(config_json) <= MAX_CONFIG_ARG
    path, resources = ACTORS, {}
    if len(roles) == 1 and len(roles[0]["replicas"]) == 1:
        path, resources = DIRECT, _entrypoint_resources(roles[0])
    entrypoint = ENTRYPOINTS[path]
    return RayJob(
        address=address,
        submission_id=submission_id,
        entrypoint=f"{entrypoint} {shlex.quote(config_json)}" if in_argv else entrypoint,
        runtime_env=runtime_env(cfg, None if in_argv else config_json),
        metadata={
            METADATA_KEY: app.name,
            "torchx_roles": json.dumps(
                {r["name"]: len(r["replicas"]) for r in roles}, separators=(",", ":")
            ),
            **resources_metadata(resources),
            **_sweep_metadata(app),
        },
        driver_config=config,
        path=path,
        entrypoint_resources=resources,
    )


def _sweep_metadata(app: AppDef) -> dict[str, str]:
    """The job metadata that names the sweep the app is a trial of (none for other apps)."""
    env = app.roles[0].env if app.roles else {}
    trial = sweep_trial(env.get(ENV_SWEEP_ID), env.get(ENV_SWEEP_INDEX))
    return {SWEEP_METADATA_KEY: trial} if trial else {}


def _without_rank0(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != TORCHX_RANK0_HOST}


__all__ = [
    "ACTORS",
    "DIRECT",
    "ENTRYPOINTS",
    "METADATA_KEY",
    "SWEEP_METADATA_KEY",
    "RayJob",
    "build_job",
    "format_job",
    "http_url",
    "runtime_env",
    "strip_scheme",
]
