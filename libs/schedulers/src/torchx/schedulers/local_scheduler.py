"""local_cwd and local_dir: run every replica as a process on this machine, in a directory.

Where a role runs is up to the scheduler's image provider: ``local_cwd`` uses the role's
image when it is a directory and the current directory otherwise (:class:`CWDImageProvider`);
``local_dir`` requires the image to be a directory (:class:`LocalDirectoryImageProvider`).

Each app gets a small detached supervisor process (see ``_local_supervisor``) that owns its
replicas and keeps the app's state on disk, so ``describe``, ``log_iter``, ``cancel`` and
``list`` work from any process, also after the launcher has exited.

Where things are:

- ``<state dir>`` is ``$XDG_STATE_HOME/torchx`` (default ``~/.local/state/torchx``), or
  the ``state_dir`` given to the scheduler;
- ``<log_dir>/<app_id>/<role>/<k>/{stdout,stderr,combined}`` hold each replica's output;
  ``log_dir`` is a run option, by default ``<state dir>/local_cwd/logs``;
- ``<state dir>/local_cwd/apps/<app_id>`` links to the app's directory, wherever its logs
  went, which is how other processes find it.
"""

from __future__ import annotations

import abc
import contextlib
import math
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import typing
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from torchx.schedulers import _local_supervisor as sup
from torchx.schedulers._api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    filter_regex,
)
from torchx.schedulers._errors import SchedulerError, check_params
from torchx.schedulers._replica_env import TORCHX_RANK0_HOST, launch_defaults, replica_env
from torchx.schedulers.ids import make_unique
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    ReplicaStatus,
    Resource,
    RetryPolicy,
    Role,
    RoleStatus,
    SpecsError,
    is_terminal,
    macros,
    runopts,
)

BACKEND = "local_cwd"
DIR_BACKEND = "local_dir"
_APP_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# How often a tailing reader looks for new output once it has read everything.
TAIL_INTERVAL = 0.05


class AppStateError(SchedulerError):
    """An app's state on disk cannot be read; the message names the file and why."""

    def __init__(self, backend: str, app_id: str, path: str, reason: str) -> None:
        self.app_id = app_id
        self.path = path
        super().__init__(
            backend,
            f"app {app_id!r}: cannot read its state file {path}: {reason}",
            "the app's other files are kept; delete its directory to forget the app",
        )


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local/state")
    return Path(base) / "torchx"


@dataclass
class LocalReplicaParams:
    role: str
    id: int
    argv: list[str]
    env: dict[str, str]
    cwd: str


@dataclass
class LocalRequest:
    """What ``schedule`` writes and starts: one entry per replica, all paths absolute."""

    app_id: str
    app_dir: str
    replicas: list[LocalReplicaParams]
    roles: dict[str, dict[str, Any]]
    cancel_grace_s: float
    app: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": sup.STATE_VERSION,
            "app_id": self.app_id,
            "app_dir": self.app_dir,
            "submitted_at": time.time(),
            "cancel_grace_s": self.cancel_grace_s,
            "roles": self.roles,
            "replicas": [
                {"role": r.role, "id": r.id, "argv": r.argv, "env": r.env, "cwd": r.cwd}
                for r in self.replicas
            ],
            "app": self.app,
        }


def _format_request(req: LocalRequest) -> str:
    lines = [f"app_id: {req.app_id}", f"app_dir: {req.app_dir}"]
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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _app_to_json(app: AppDef) -> dict[str, Any]:
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


def _app_from_json(data: Mapping[str, Any]) -> AppDef:
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


class ImageProvider(abc.ABC):
    """Where a role's replicas run on this machine, given the role's image.

    Made once per dry-run from the resolved run options (``provider_class(cfg)``).
    """

    def __init__(self, cfg: Mapping[str, CfgVal] | None = None) -> None:
        self.cfg = dict(cfg or {})

    def fetch_role(self, role: Role) -> str:
        """The image root of ``role`` (``fetch(role.image)`` unless overridden)."""
        return self.fetch(role.image)

    @abc.abstractmethod
    def fetch(self, image: str) -> str:
        """The directory ``image`` stands for on this machine (made ready if needed)."""

    def get_cwd(self, image: str) -> str | None:
        """The directory replicas start in; None for the image root."""
        return None

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        """The program to run: by default the role's entrypoint inside the image root."""
        return os.path.join(img_root, role.entrypoint)


class LocalDirectoryImageProvider(ImageProvider):
    """The image is a directory on this machine; replicas run in it and a relative
    entrypoint is looked up there (then on PATH)."""

    def fetch(self, image: str) -> str:
        if not image or not os.path.isdir(image):
            raise SpecsError(
                "role image", image, "the local_dir scheduler runs in a directory; give one"
            )
        return os.path.abspath(image)

    def get_cwd(self, image: str) -> str | None:
        return self.fetch(image)

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return role.entrypoint


class CWDImageProvider(ImageProvider):
    """Replicas run in the role's image when it names a directory, else in the current
    directory (pytorch/torchx always used the current directory)."""

    def fetch(self, image: str) -> str:
        return os.path.abspath(image) if image and os.path.isdir(image) else os.getcwd()

    def get_cwd(self, image: str) -> str | None:
        return self.fetch(image)

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return role.entrypoint


def _join_path(*parts: str | None) -> str:
    return os.pathsep.join(p for p in parts if p)


def _resolve_entrypoint(role: Role, entrypoint: str, cwd: str, env: Mapping[str, str]) -> None:
    """Refuse, before anything starts, an entrypoint that cannot be executed."""
    if os.sep in entrypoint:
        path = os.path.join(cwd, entrypoint)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return
        problem = f"{path} is not an executable file"
    else:
        search = env.get("PATH", os.environ.get("PATH", os.defpath))
        if shutil.which(entrypoint, path=search):
            return
        problem = "not found on PATH"
    raise SpecsError(
        f"role {role.name!r} entrypoint",
        entrypoint,
        f"{problem}; give a program on PATH or a path relative to {cwd}",
    )


class LocalScheduler(Scheduler[LocalRequest]):
    """Runs apps as local processes; see the module docstring for where things are kept."""

    def __init__(
        self,
        session_name: str = "torchx",
        image_provider_class: Callable[[Mapping[str, CfgVal]], ImageProvider] = CWDImageProvider,
        cache_size: int = 100,
        extra_paths: list[str] | None = None,
        state_dir: str | os.PathLike[str] | None = None,
        backend: str = BACKEND,
    ) -> None:
        super().__init__(backend, session_name)
        if not isinstance(cache_size, int) or isinstance(cache_size, bool) or cache_size < 1:
            raise SpecsError("cache_size", cache_size, "give a whole number of apps >= 1")
        self.image_provider_class = image_provider_class
        self.cache_size = cache_size
        self.extra_paths = list(extra_paths or [])
        self.state_dir = Path(state_dir) if state_dir is not None else default_state_dir()
        self._index = self.state_dir / BACKEND / "apps"
        self._supervisors: dict[str, subprocess.Popen[bytes]] = {}
        self._requests: dict[str, dict[str, Any]] = {}  # never change once written

    # -- submission -------------------------------------------------------------------

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add(
            "log_dir",
            str,
            "directory that holds <app_id>/<role>/<replica>/stdout|stderr "
            f"(default: {self.state_dir / BACKEND / 'logs'})",
        )
        opts.add(
            "cwd",
            str,
            "directory the replicas run in (the image); default: the role's image if it is "
            "a directory, else the current directory",
        )
        opts.add(
            "auto_set_cuda_visible_devices",
            bool,
            "give each replica its own CUDA_VISIBLE_DEVICES slice of resource.gpu GPUs",
            default=False,
        )
        opts.add(
            "cancel_grace_seconds",
            float,
            "seconds between SIGTERM and SIGKILL when an app is cancelled or restarted",
            default=5.0,
        )
        return opts

    def with_workspace(
        self, app: AppDef, cfg: Mapping[str, CfgVal], workspace: str
    ) -> tuple[AppDef, dict[str, CfgVal]]:
        path = os.path.abspath(os.path.expanduser(workspace))
        if not os.path.isdir(path):
            raise SpecsError("workspace", workspace, "the local_cwd workspace must be a directory")
        return app, {**cfg, "cwd": path}

    def _log_root(self, cfg: Mapping[str, CfgVal]) -> str:
        given = cfg.get("log_dir")
        root = str(given) if given else str(self.state_dir / BACKEND / "logs")
        return os.path.abspath(os.path.expanduser(root))

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[LocalRequest]:
        app_id = make_unique(app.name)
        app_dir = os.path.join(self._log_root(cfg), app_id)
        cwd_opt = cfg.get("cwd")
        if cwd_opt is not None and not os.path.isdir(str(cwd_opt)):
            raise SpecsError("run option 'cwd'", cwd_opt, "give an existing directory")
        gpu_slices: list[list[str]] | None = None
        if cfg.get("auto_set_cuda_visible_devices"):
            counts = [max(r.resource.gpu, 0) for r in app.roles for _ in range(r.num_replicas)]
            gpu_slices = split_gpus(counts, visible_gpus()) if any(counts) else None
        port = _free_port()
        provider = self.image_provider_class(cfg)
        replicas: list[LocalReplicaParams] = []
        roles: dict[str, dict[str, Any]] = {}
        n = 0
        for role in app.roles:
            img_root = provider.fetch_role(role)
            if cwd_opt is not None:
                cwd = os.path.abspath(str(cwd_opt))
            else:
                cwd = provider.get_cwd(role.image) or img_root
            roles[role.name] = {
                "max_retries": role.max_retries,
                "retry_policy": RetryPolicy(role.retry_policy).value,
                "num_replicas": role.num_replicas,
            }
            for k in range(role.num_replicas):
                filled = macros.Values(
                    img_root=img_root,
                    app_id=app_id,
                    replica_id=str(k),
                    rank0_env=TORCHX_RANK0_HOST,
                ).apply(role)
                env = replica_env(
                    filled.env,
                    app_id=app_id,
                    role_name=role.name,
                    replica_id=str(k),
                    rank0_host="127.0.0.1",
                    defaults=launch_defaults(
                        master_addr="127.0.0.1",
                        master_port=port,
                        rank=k,
                        world_size=role.num_replicas,
                        same_host=True,
                    ),
                )
                if self.extra_paths:
                    env["PATH"] = _join_path(
                        *self.extra_paths, env.get("PATH") or os.environ.get("PATH")
                    )
                # A bare entrypoint kept in the working directory (``train.sh`` in the image
                # directory) runs as with pytorch/torchx's local schedulers: that directory
                # then ends PATH (PATH's own entries still win). Other requests keep the
                # environment as it is.
                path = env.get("PATH") or os.environ.get("PATH", os.defpath)
                if (
                    os.sep not in filled.entrypoint
                    and not shutil.which(filled.entrypoint, path=path)
                    and shutil.which(filled.entrypoint, path=cwd)
                ):
                    env["PATH"] = _join_path(path, cwd)
                if gpu_slices is not None:
                    env["CUDA_VISIBLE_DEVICES"] = ",".join(gpu_slices[n])
                entrypoint = provider.get_entrypoint(img_root, filled)
                if k == 0:
                    _resolve_entrypoint(role, entrypoint, cwd, env)
                replicas.append(
                    LocalReplicaParams(role.name, k, [entrypoint, *filled.args], env, cwd)
                )
                n += 1
        grace = cfg.get("cancel_grace_seconds")
        if grace is not None and (
            not isinstance(grace, (int, float))
            or not math.isfinite(grace)
            or not 0 <= grace <= sup.MAX_GRACE_S
        ):
            # The supervisor waits this long between SIGTERM and SIGKILL: it must be a time.
            raise SpecsError(
                "run option 'cancel_grace_seconds'",
                grace,
                f"give a finite number of seconds between 0 and {sup.MAX_GRACE_S:.0f}",
            )
        req = LocalRequest(
            app_id=app_id,
            app_dir=app_dir,
            replicas=replicas,
            roles=roles,
            cancel_grace_s=float(grace) if isinstance(grace, (int, float)) else 5.0,
            app=_app_to_json(app),
        )
        return AppDryRunInfo(req, _format_request)

    def schedule(self, dryrun_info: AppDryRunInfo[LocalRequest]) -> str:
        req = dryrun_info.request
        meta = os.path.join(req.app_dir, sup.META_DIR)
        try:
            os.makedirs(meta)
        except FileExistsError:
            raise SpecsError(
                "app id", req.app_id, "already used; dry-run again for a new id"
            ) from None
        except OSError as e:
            raise SpecsError(
                "run option 'log_dir'",
                os.path.dirname(req.app_dir),
                f"cannot create {req.app_dir} ({e.strerror}); give a writable directory "
                "with -cfg log_dir=DIR",
            ) from None
        sup.write_atomic(os.path.join(meta, sup.REQUEST_FILE), req.to_json())
        sup.write_atomic(
            os.path.join(meta, sup.STATE_FILE),
            {"version": sup.STATE_VERSION, "app_id": req.app_id, "state": "PENDING"},
        )
        self._index.mkdir(parents=True, exist_ok=True)
        os.symlink(req.app_dir, self._index / req.app_id)
        with open(os.path.join(meta, sup.SUPERVISOR_LOG), "ab") as log:
            self._supervisors[req.app_id] = subprocess.Popen(
                [sys.executable, "-I", "-S", sup.__file__, req.app_dir],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        return req.app_id

    # -- finding apps -----------------------------------------------------------------

    def _app_dir(self, app_id: str) -> str | None:
        if not isinstance(app_id, str) or not _APP_ID.match(app_id):
            raise SpecsError(
                "app id", app_id, "expected NAME-SUFFIX as printed by run (letters, digits, -_.)"
            )
        link = self._index / app_id
        try:
            target = os.readlink(link)
        except OSError:
            return None
        return target if os.path.isdir(os.path.join(target, sup.META_DIR)) else None

    def _read(self, app_dir: str) -> tuple[dict[str, Any], dict[str, Any]]:
        try:
            request = self._requests.get(app_dir)
            if request is None:
                path = os.path.join(app_dir, sup.META_DIR, sup.REQUEST_FILE)
                request = sup.read_data(path) or {}
                if request:
                    if len(self._requests) >= self.cache_size:
                        # Requests never change, so the oldest one read is the one to forget.
                        del self._requests[next(iter(self._requests))]
                    self._requests[app_dir] = request
            state = sup.read_data(os.path.join(app_dir, sup.META_DIR, sup.STATE_FILE)) or {}
        except sup.StateFileError as e:
            raise AppStateError(self.backend, os.path.basename(app_dir), e.path, e.reason) from None
        return request, state

    def _supervisor_alive(self, app_id: str, state: Mapping[str, Any]) -> bool | None:
        """Whether the app's supervisor runs; None when it cannot be told yet."""
        own = self._supervisors.get(app_id)
        if own is not None and own.poll() is not None:
            return False
        pid = state.get("supervisor_pid")
        if pid is None:
            return True if own is not None else None
        token = state.get("supervisor_start")
        if token is not None and os.path.isdir("/proc"):
            return bool(sup.process_start_token(int(pid)) == token)
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def _current_state(self, app_id: str, app_dir: str) -> tuple[dict[str, Any], dict[str, Any]]:
        request, state = self._read(app_dir)
        name = state.get("state", "UNKNOWN")
        if name in ("PENDING", "RUNNING") and self._supervisor_alive(app_id, state) is False:
            # It may have written its last state just before exiting.
            request, state = self._read(app_dir)
            if state.get("state") in ("PENDING", "RUNNING"):
                state = self._record_dead_supervisor(app_dir, state)
        return request, state

    def _record_dead_supervisor(self, app_dir: str, state: dict[str, Any]) -> dict[str, Any]:
        """The supervisor died without a word: kill its replicas' groups and say so on disk."""
        killed = sup.kill_recorded_groups(state)
        pid = state.get("supervisor_pid")
        log = os.path.join(app_dir, sup.META_DIR, sup.SUPERVISOR_LOG)
        msg = (
            f"the app's supervisor (pid {pid}) ended without recording the end of the app "
            f"(killed?); see {log}"
        )
        if killed:
            msg += f"; torchx killed the process groups of its replicas still running: {killed}"
        replicas = [
            {**r, "state": "FAILED", "pgid": None}
            if r.get("state") in ("PENDING", "RUNNING")
            else r
            for r in state.get("replicas", [])
        ]
        final = {
            **state,
            "version": sup.STATE_VERSION,
            "state": "FAILED",
            "msg": msg,
            "structured_error_msg": msg,
            "replicas": replicas,
            "ended_at": time.time(),
        }
        # Recorded once, so later readers neither kill nor guess again.
        with contextlib.suppress(OSError):
            sup.write_atomic(os.path.join(app_dir, sup.META_DIR, sup.STATE_FILE), final)
        return final

    # -- inspection -------------------------------------------------------------------

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        app_dir = self._app_dir(app_id)
        if app_dir is None:
            return None
        request, state = self._current_state(app_id, app_dir)
        statuses: dict[str, RoleStatus] = {
            name: RoleStatus(name) for name in request.get("roles", {})
        }
        by_replica = {(r["role"], r["id"]): r for r in state.get("replicas", [])}
        for spec in request.get("replicas", []):
            rec = by_replica.get((spec["role"], spec["id"]), {})
            statuses[spec["role"]].replicas.append(
                ReplicaStatus(
                    id=spec["id"],
                    state=_state(rec.get("state", "PENDING")),
                    role=spec["role"],
                    hostname=socket.gethostname() if rec.get("pid") else "",
                    exit_code=rec.get("exit_code"),
                    structured_error_msg=rec.get("error", ""),
                )
            )
        app = _app_from_json(request["app"]) if request.get("app") else None
        return DescribeAppResponse(
            app_id=app_id,
            state=_state(state.get("state", "UNKNOWN")),
            num_restarts=int(state.get("num_restarts", 0)),
            msg=state.get("msg", ""),
            structured_error_msg=state.get("structured_error_msg", ""),
            roles_statuses=list(statuses.values()),
            roles=list(app.roles) if app else [],
            app=app,
        )

    def list(self) -> list[ListAppResponse]:
        try:
            ids = sorted(os.listdir(self._index))
        except FileNotFoundError:
            return []
        out = []
        for app_id in ids:
            app_dir = self._app_dir(app_id) if _APP_ID.match(app_id) else None
            if app_dir is None:
                continue
            try:
                request, state = self._current_state(app_id, app_dir)
            except AppStateError as e:
                # One unreadable app is its own problem: it shows as UNKNOWN, with why.
                out.append(ListAppResponse(app_id=app_id, state=AppState.UNKNOWN, name=str(e)))
                continue
            submitted = request.get("submitted_at")
            out.append(
                ListAppResponse(
                    app_id=app_id,
                    state=_state(state.get("state", "UNKNOWN")),
                    name=request.get("app", {}).get("name", ""),
                    submitted_at=datetime.fromtimestamp(submitted) if submitted else None,
                )
            )
        out.sort(key=lambda r: r.submitted_at or datetime.min)
        return out

    def wait(self, app_id: str, timeout: float | None = None) -> DescribeAppResponse | None:
        """Block until the app ends; woken by its supervisor's exit, not by polling."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.002
        while True:
            desc = self.describe(app_id)
            if desc is None or is_terminal(desc.state):
                return desc
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return desc
            app_dir = self._app_dir(app_id)
            _, state = self._read(app_dir) if app_dir else ({}, {})
            if not self._wait_for_exit(app_id, state, left):
                # No pid recorded yet (the supervisor is starting): look again shortly.
                time.sleep(pause if left is None else min(pause, left))
                pause = min(pause * 2, 0.05)

    def _wait_for_exit(self, app_id: str, state: Mapping[str, Any], timeout: float | None) -> bool:
        """Sleep until the supervisor exits or ``timeout``; False if there is nothing to watch."""
        own = self._supervisors.get(app_id)
        pid = own.pid if own is not None else state.get("supervisor_pid")
        if pid is None:
            return False
        if own is None and self._supervisor_alive(app_id, state) is False:
            return True
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is None:
            time.sleep(0.01 if timeout is None else min(0.01, timeout))
            return True
        import select

        try:
            fd = pidfd_open(int(pid))
        except ProcessLookupError:
            return True
        try:
            select.select([fd], [], [], timeout)
        finally:
            os.close(fd)
        if own is not None:
            own.poll()
        return True

    def log_iter(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        should_tail: bool = False,
        streams: Stream | None = None,
    ) -> Iterable[str]:
        app_dir = self._app_dir(app_id)
        if app_dir is None:
            raise SpecsError(
                "app id", app_id, f"no such {self.backend} app; `list` shows the known ones"
            )
        request, _ = self._read(app_dir)
        roles = request.get("roles", {})
        if role_name not in roles:
            from torchx.specs import closest

            raise SpecsError("role", role_name, closest(str(role_name), list(roles)))
        count = int(roles[role_name]["num_replicas"])
        if not isinstance(k, int) or not 0 <= k < count:
            raise SpecsError(
                "replica", k, f"role {role_name!r} has replicas 0..{count - 1}; pick one of them"
            )
        stream = Stream(streams) if streams is not None else Stream.COMBINED
        replica_dir = os.path.join(app_dir, role_name, str(k))
        lines = self._timed_lines(app_id, replica_dir, stream, should_tail)
        lo = since.timestamp() if since is not None else None
        hi = until.timestamp() if until is not None else None
        in_window = (
            line for t, line in lines if (lo is None or t >= lo) and (hi is None or t <= hi)
        )
        return filter_regex(regex, in_window)

    def _timed_lines(
        self, app_id: str, replica_dir: str, stream: Stream, follow: bool
    ) -> Iterator[tuple[float, str]]:
        path = os.path.join(replica_dir, stream.value)
        times_path = os.path.join(replica_dir, sup.TIMES_FILE)
        code = sup.STREAM_CODES[stream.value]
        offsets: list[int] = []
        stamps: list[float] = []
        times_pos = 0
        pos = 0
        pending = b""
        f = None
        try:
            while True:
                ended = not follow or self._ended(app_id)
                if f is None and os.path.exists(path):
                    f = open(path, "rb")  # noqa: SIM115 -- kept open across the tail loop
                chunk = f.read() if f is not None else b""
                if chunk:
                    times_pos = _read_times(times_path, times_pos, code, offsets, stamps)
                    data = pending + chunk
                    start = pos - len(pending)
                    parts = data.split(b"\n")
                    pending = parts.pop()
                    for part in parts:
                        i = bisect_right(offsets, start) - 1
                        t = stamps[i] if i >= 0 else 0.0
                        yield t, part.decode("utf-8", "replace") + "\n"
                        start += len(part) + 1
                    pos += len(chunk)
                    continue
                if ended:
                    if pending:
                        times_pos = _read_times(times_path, times_pos, code, offsets, stamps)
                        i = bisect_right(offsets, pos - len(pending)) - 1
                        yield (stamps[i] if i >= 0 else 0.0), pending.decode("utf-8", "replace")
                    return
                time.sleep(TAIL_INTERVAL)
        finally:
            if f is not None:
                f.close()

    def _ended(self, app_id: str) -> bool:
        desc = self.describe(app_id)
        return desc is None or is_terminal(desc.state)

    # -- control ----------------------------------------------------------------------

    def _cancel_existing(self, app_id: str) -> None:
        """Stop the app's replicas and their children; returns once they are gone.

        Raises AppStateError when the app's state cannot be read (naming the file), and
        SchedulerError when processes of the app could not be stopped.
        """
        app_dir = self._app_dir(app_id)
        if app_dir is None:
            raise SpecsError(
                "app id", app_id, f"no such {self.backend} app; `list` shows the known ones"
            )
        request, state = self._current_state(app_id, app_dir)
        if is_terminal(_state(state.get("state", "UNKNOWN"))):
            return
        marker = os.path.join(app_dir, sup.META_DIR, sup.CANCEL_FILE)
        with open(marker, "w"):
            pass
        _, state = self._read(app_dir)
        pid = state.get("supervisor_pid")
        if pid is not None and self._supervisor_alive(app_id, state):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), 15)
        grace = float(request.get("cancel_grace_s", 5.0))
        # the supervisor also looks for the marker once per housekeeping interval
        desc = self.wait(app_id, timeout=grace + 15.0 + sup.HOUSEKEEPING_INTERVAL)
        if desc is None or is_terminal(desc.state):
            return  # ended, or its directory was deleted (its supervisor then stops it)
        # The supervisor is alive but did not stop the app: stop everything ourselves.
        _, state = self._read(app_dir)
        if pid is not None and self._supervisor_alive(app_id, state):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), 9)
        killed = sup.kill_recorded_groups(state)
        raise SchedulerError(
            self.backend,
            f"app {app_id!r}: its supervisor (pid {pid}) did not stop it within "
            f"{grace + 15.0:.0f}s; torchx killed the supervisor and the process groups "
            f"{killed}",
            f"see {os.path.join(app_dir, sup.META_DIR, sup.SUPERVISOR_LOG)}",
        )

    def close(self) -> None:
        # Apps outlive this object by design; only reap supervisors that already ended.
        for app_id, proc in list(self._supervisors.items()):
            if proc.poll() is not None:
                del self._supervisors[app_id]


def _read_times(path: str, start: int, code: str, offsets: list[int], stamps: list[float]) -> int:
    """Append the (offset, time) entries of ``code`` found after byte ``start`` of .times."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read()
    except FileNotFoundError:
        return start
    end = data.rfind(b"\n") + 1
    for line in data[:end].decode().splitlines():
        c, off, t = line.split()
        if c == code:
            offsets.append(int(off))
            stamps.append(float(t))
    return start + end


def _state(name: str) -> AppState:
    try:
        return AppState[name]
    except KeyError:
        return AppState.UNKNOWN


def create_scheduler(
    session_name: str,
    state_dir: str | os.PathLike[str] | None = None,
    cache_size: int = 100,
    extra_paths: list[str] | None = None,
    **params: Any,
) -> LocalScheduler:
    """The local_cwd factory; any parameter but these is refused."""
    check_params(BACKEND, params, ("state_dir", "cache_size", "extra_paths"))
    return LocalScheduler(
        session_name,
        image_provider_class=CWDImageProvider,
        cache_size=cache_size,
        extra_paths=extra_paths,
        state_dir=state_dir,
    )


def create_dir_scheduler(
    session_name: str,
    state_dir: str | os.PathLike[str] | None = None,
    cache_size: int = 100,
    extra_paths: list[str] | None = None,
    **params: Any,
) -> LocalScheduler:
    """The local_dir factory: each role's image must be a directory, which it runs in."""
    check_params(DIR_BACKEND, params, ("state_dir", "cache_size", "extra_paths"))
    return LocalScheduler(
        session_name,
        image_provider_class=LocalDirectoryImageProvider,
        cache_size=cache_size,
        extra_paths=extra_paths,
        state_dir=state_dir,
        backend=DIR_BACKEND,
    )


# pytorch/torchx 0.7's module-level names, for code that imports them from here.
# Each replica's output files, in <log_dir>/<app_id>/<role>/<replica>/ (0.7 added ".log").
STDOUT_LOG = Stream.STDOUT.value
STDERR_LOG = Stream.STDERR.value
COMBINED_LOG = Stream.COMBINED.value
NA = "<N/A>"
NONE = "<NONE>"
ENV_CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
# 0.7's names for a replica's launch parameters and the whole launch request.
ReplicaParam = LocalReplicaParams
PopenRequest = LocalRequest


class LocalOpts(typing.TypedDict, total=False):
    """The local_cwd run options, typed."""

    log_dir: str
    cwd: str
    auto_set_cuda_visible_devices: bool
    cancel_grace_seconds: float


@typing.runtime_checkable
class PopenProtocol(typing.Protocol):
    """What a started replica process offers (``subprocess.Popen`` has all of it)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def poll(self) -> int | None: ...

    def kill(self) -> None: ...

    def terminate(self) -> None: ...


class SignalException(Exception):
    """A process was told to stop by signal ``sigval`` (a ``signal.Signals``)."""

    def __init__(self, msg: str, sigval: Any) -> None:
        super().__init__(msg)
        self.sigval = sigval


class LogIterator:
    """The lines of ``log_file``, one replica's output file of app ``app_id``.

    With ``should_tail`` it follows the file until ``scheduler`` reports the app ended,
    then reads what is left; a file that never appears before the app ends is a
    ``RuntimeError`` naming it. Lines keep their ``\\n``.
    """

    def __init__(
        self,
        app_id: str,
        log_file: str,
        scheduler: Scheduler[Any],
        should_tail: bool = True,
    ) -> None:
        self.app_id = app_id
        self.log_file = log_file
        self.scheduler = scheduler
        self.should_tail = should_tail

    def _ended(self) -> bool:
        if not self.should_tail:
            return True
        desc = self.scheduler.describe(self.app_id)
        return desc is None or is_terminal(desc.state)

    def __iter__(self) -> Iterator[str]:
        while not os.path.isfile(self.log_file):
            if self._ended():
                raise RuntimeError(f"app {self.app_id} ended without writing {self.log_file}")
            time.sleep(TAIL_INTERVAL)
        with open(self.log_file, encoding="utf-8", errors="replace", newline="\n") as f:
            pending = ""
            while True:
                ended = self._ended()
                chunk = f.readline()
                while chunk:
                    pending += chunk
                    if pending.endswith("\n"):
                        yield pending
                        pending = ""
                    chunk = f.readline()
                if ended:
                    if pending:
                        yield pending
                    return
                time.sleep(TAIL_INTERVAL)
