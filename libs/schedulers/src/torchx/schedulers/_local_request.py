"""What local_cwd's dry-run builds: the replicas to start, in a form the supervisor reads."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torchx.schedulers._local_requeue import DEFAULT_MAX_REQUEUES
from torchx.schedulers._local_state_files import STATE_VERSION
from torchx.specs import (
    AppDef,
    Resource,
    RetryPolicy,
    Role,
    SpecsError,
)


@dataclass
class LocalReplicaParams:
    role: str
    id: int
    argv: list[str]
    env: dict[str, str]
    cwd: str

    @property
    def args(self) -> list[str]:
        """0.7's name for ``argv``: the program and its arguments."""
        return self.argv


# Where in an app's directory its workspace is copied: no role's directory, as a role name
# starts with a letter or digit.
WORKSPACE_DIR = ".workspace"


def workspace_copy_of(app_dir: str) -> str:
    """Where the workspace of the app in ``app_dir`` is copied."""
    return os.path.join(app_dir, WORKSPACE_DIR)


@dataclass
class LocalRequest:
    """What ``schedule`` writes and starts: one entry per replica, all paths absolute.

    ``workspace``: a directory ``schedule`` copies into ``workspace_copy``, inside the app's
    directory, where the replicas then run; it goes when the app's record does.
    """

    app_id: str
    app_dir: str
    replicas: list[LocalReplicaParams]
    roles: dict[str, dict[str, Any]]
    cancel_grace_s: float
    max_requeues: int = DEFAULT_MAX_REQUEUES
    app: dict[str, Any] = field(default_factory=dict)
    workspace: str | None = None

    @property
    def workspace_copy(self) -> str:
        return workspace_copy_of(self.app_dir)

    def before_copy(self, path: str) -> str:
        """Where the file at ``path``, as the replicas will see it, is before ``schedule``
        copies the workspace: a path inside the copy is the same path in the workspace."""
        return self.before_copy_of(path, self.app_dir, self.workspace)

    @staticmethod
    def before_copy_of(path: str, app_dir: str, workspace: str | None) -> str:
        """``before_copy`` for a request not made yet."""
        if workspace is None:
            return path
        copy = workspace_copy_of(app_dir)
        if path == copy or path.startswith(copy + os.sep):
            return workspace + path[len(copy) :]
        return path

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "app_id": self.app_id,
            "app_dir": self.app_dir,
            "submitted_at": time.time(),
            "cancel_grace_s": self.cancel_grace_s,
            "max_requeues": self.max_requeues,
            "roles": self.roles,
            "replicas": [
                {"role": r.role, "id": r.id, "argv": r.argv, "env": r.env, "cwd": r.cwd}
                for r in self.replicas
            ],
            "app": self.app,
            "workspace": self.workspace,
        }


def format_request(req: LocalRequest) -> str:
    lines = [f"app_id: {req.app_id}", f"app_dir: {req.app_dir}"]
    if req.workspace is not None:
        lines.append(f"workspace: {req.workspace}, copied into {req.workspace_copy} on submit")
    for r in req.replicas:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(r.env.items()))
        lines.append(f"{r.role}/{r.id}: cd {shlex.quote(r.cwd)} && {env} {shlex.join(r.argv)}")
    return "\n".join(lines)


def split_gpus(counts: list[int], visible: list[str]) -> list[list[str]]:
    """Give each replica (asking for ``counts[i]`` GPUs) its own slice of ``visible``."""
    need = sum(counts)
    if need > len(visible):
        raise SpecsError(
            "auto_set_cuda_visible_devices",
            True,
            f"the replicas ask for {need} GPUs in all but {len(visible)} are visible; "
            "lower resource.gpu or num_replicas, or turn the option off",
        )
    out, start = [], 0
    for n in counts:
        out.append(visible[start : start + n])
        start += n
    return out


def visible_gpus() -> list[str]:
    """The GPU ids replicas may be given: $CUDA_VISIBLE_DEVICES if set, else nvidia-smi's."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [d.strip() for d in listed.split(",") if d.strip()]
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(out.splitlines()) if line.startswith("GPU ")]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def app_to_json(app: AppDef) -> dict[str, Any]:
    return {
        "name": app.name,
        "metadata": {k: str(v) for k, v in app.metadata.items()},
        "roles": [
            {
                "name": r.name,
                "image": r.image,
                "entrypoint": r.entrypoint,
                "args": [str(a) for a in r.args],
                "env": dict(r.env),
                "num_replicas": r.num_replicas,
                "min_replicas": r.min_replicas,
                "max_retries": r.max_retries,
                "retry_policy": RetryPolicy(r.retry_policy).value,
                "resource": {
                    "cpu": r.resource.cpu,
                    "gpu": r.resource.gpu,
                    "memMB": r.resource.memMB,
                    "devices": dict(r.resource.devices),
                },
                "port_map": dict(r.port_map),
            }
            for r in app.roles
        ],
    }


def app_from_json(data: Mapping[str, Any]) -> AppDef:
    roles = []
    for r in data.get("roles", []):
        res = r.get("resource", {})
        roles.append(
            Role(
                name=r["name"],
                image=r["image"],
                entrypoint=r["entrypoint"],
                args=list(r["args"]),
                env=dict(r["env"]),
                num_replicas=r["num_replicas"],
                min_replicas=r.get("min_replicas"),
                max_retries=r["max_retries"],
                retry_policy=RetryPolicy(r["retry_policy"]),
                resource=Resource(
                    cpu=res.get("cpu", -1),
                    gpu=res.get("gpu", -1),
                    memMB=res.get("memMB", -1),
                    devices=dict(res.get("devices", {})),
                ),
                port_map=dict(r.get("port_map", {})),
            )
        )
    return AppDef(name=data["name"], roles=roles, metadata=dict(data.get("metadata", {})))


def requeue_cap(value: object) -> int:
    """Run option ``max_requeues``: a whole number, 0 or more."""
    if value is None:
        return DEFAULT_MAX_REQUEUES
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SpecsError(
            "run option 'max_requeues'",
            value,
            "give a whole number of requeues, 0 or more (0: an app asking for a requeue fails)",
        )
    return value
