"""local_docker: runs every replica as a container on the local Docker engine.

Containers carry labels naming their app, role and replica, so ``describe``, ``log_iter``,
``cancel`` and ``list`` work from any process through the engine alone. Every request goes
through the Docker SDK (``pip install "torchx-schedulers[docker]"``), imported only when an
engine is contacted; the engine is found as the docker CLI finds it (``_docker_client``),
and pulls and pushes use the credentials ``docker login`` stored. Workspace images are
built and pushed by :class:`~torchx.workspace.docker_workspace.DockerWorkspaceMixin`, on
the same client.

Networking (run option ``network``):

- ``torchx`` (default) or any bridge network name: created if missing; replica ``k`` of
  role ``r`` is reachable by its hostname ``<app_id>-<r>-<k>``;
- ``host``: the replicas share the host's network and reach each other on 127.0.0.1;
- ``none``: no network at all (single-replica apps).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, TypedDict

from torchx.schedulers._api import (
    DescribeAppResponse,
    ListAppResponse,
    LogRequest,
    Scheduler,
    Stream,
)
from torchx.schedulers._bounded_lines import decoded_lines
from torchx.schedulers._container_rules import (
    check_image_repo,
    checked_roles,
    to_dns_label,
)
from torchx.schedulers._docker_client import (
    EngineAddress,
    connect,
    explain,
    refusal_named,
    resolve_engine,
    sdk,
)
from torchx.schedulers._docker_requeue import (
    ATTEMPT_FILE,
    ATTEMPT_FILE_ENV,
    read_attempt,
    requeue_containers,
)
from torchx.schedulers._docker_status import (
    CONTAINER_STATE as CONTAINER_STATE,  # public here, as before the split
)
from torchx.schedulers._docker_status import (
    LABEL_APP_ID,
    LABEL_APP_NAME,
    LABEL_CANCELLED,
    LABEL_REPLICA,
    LABEL_ROLE,
    LABEL_VERSION,
    _describe,
    _stamped,
    _status,
    run_times,
)
from torchx.schedulers._docker_status import LABEL_REPLICA_ID as LABEL_REPLICA_ID  # 0.7's
from torchx.schedulers._docker_status import LABEL_ROLE_NAME as LABEL_ROLE_NAME  # 0.7's
from torchx.schedulers._errors import SchedulerError, check_params
from torchx.schedulers._preemption_notes import DOCKER_NOTE, grace_seconds
from torchx.schedulers._replicas import role_replicas
from torchx.schedulers.ids import make_unique
from torchx.schedulers.sweep_names import ENV_SWEEP_ID, ENV_SWEEP_INDEX, sweep_trial
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    BindMount,
    CfgVal,
    DeviceMount,
    Role,
    SpecsError,
    VolumeMount,
    is_terminal,
    runopts,
)
from torchx.workspace.docker_workspace import (
    WORKSPACE_REPO,
    DockerWorkspaceMixin,
    ImagesToPush,
    credential_helper_failed,
)

BACKEND = "local_docker"
EXTRA = "docker"
MASTER_PORT = 29500
DEFAULT_NETWORK = "torchx"

# pytorch/torchx 0.7's name for it.
NETWORK = DEFAULT_NETWORK

# Docker's own default for `docker stop`.
DOCKER_STOP_GRACE_S = 10


@dataclass
class DockerContainer:
    """One replica: ``POST /containers/create?name=NAME`` with ``config`` as its JSON body."""

    role: str
    replica_id: int
    name: str
    config: dict[str, Any]

    @property
    def image(self) -> str:
        """0.7's ``image``: the image the container runs."""
        return str(self.config["Image"])

    @property
    def command(self) -> list[str]:
        """0.7's ``command``: the entrypoint followed by its arguments."""
        return [*self.config.get("Entrypoint", []), *self.config.get("Cmd", [])]

    @property
    def kwargs(self) -> Mapping[str, Any]:
        """0.7's ``kwargs``: this request as the Docker SDK's ``containers.run`` keywords,
        derived from ``config`` (read-only: change ``config`` to change the request)."""
        return MappingProxyType(_sdk_run_kwargs(self.name, self.config))


def _sdk_run_kwargs(name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    host: Mapping[str, Any] = config.get("HostConfig", {})
    kwargs: dict[str, Any] = {
        "name": name,
        "environment": dict(e.partition("=")[::2] for e in config.get("Env", [])),
        "labels": dict(config.get("Labels", {})),
        "privileged": bool(host.get("Privileged", False)),
        "network": host.get("NetworkMode"),
        "mounts": list(host.get("Mounts", [])),
        "devices": [
            f"{d['PathOnHost']}:{d['PathInContainer']}:{d['CgroupPermissions']}"
            for d in host.get("Devices", [])
        ],
    }
    if "Hostname" in config:
        kwargs["hostname"] = config["Hostname"]
    if "ShmSize" in host:
        kwargs["shm_size"] = host["ShmSize"]
    if "Memory" in host:
        kwargs["mem_limit"] = host["Memory"]
    if "NanoCpus" in host:
        kwargs["nano_cpus"] = host["NanoCpus"]
    if "DeviceRequests" in host:
        kwargs["device_requests"] = list(host["DeviceRequests"])
    if "RestartPolicy" in host:
        kwargs["restart_policy"] = dict(host["RestartPolicy"])
    return kwargs


class DockerOpts(TypedDict, total=False):
    """The local_docker run options, typed."""

    network: str
    shm_size: str
    image_repo: str
    quiet: bool
    copy_env: list[str]
    stop_grace_seconds: int


@dataclass
class DockerRequest:
    """Every container of one app, created and started in order by ``schedule``."""

    app_id: str
    containers: list[DockerContainer]
    network: str
    # workspace image -> the repository tag it is pushed as before the app starts
    push: dict[str, str] = field(default_factory=dict)


# pytorch/torchx 0.7's name for the request.
DockerJob = DockerRequest


def has_docker() -> bool:
    """Whether the Docker SDK is installed and the engine the docker CLI would use answers."""
    try:
        client = connect(resolve_engine())
    except Exception:  # whatever the reason, the answer is no
        return False
    client.close()
    return True


def _format(req: DockerRequest) -> str:
    import json

    out = [f"app_id: {req.app_id}", f"network: {req.network}", f"# {DOCKER_NOTE}"]
    out += [f"push: {src} -> {dst}" for src, dst in sorted(req.push.items())]
    for c in req.containers:
        out.append(
            f"{c.role}/{c.replica_id}: POST /containers/create?name={c.name} "
            + json.dumps(c.config, sort_keys=True)
        )
    return "\n".join(out)


def _check_app(app: AppDef, cfg: Mapping[str, CfgVal]) -> None:
    names: set[str] = set()
    for where, role in checked_roles(app.roles):
        mem = role.resource.memMB
        if mem != -1 and mem < 6:
            raise SpecsError(f"{where} resource.memMB", mem, "Docker needs at least 6 MiB")
        name = to_dns_label(role.name, 40)
        if name in names:
            raise SpecsError(f"{where} name", role.name, f"another role is also named {name!r}")
        names.add(name)
    shm = cfg.get("shm_size")
    if not isinstance(shm, str) or not _is_docker_size(shm):
        raise SpecsError(
            "run option 'shm_size'", shm, "a size like 64m, 2g or 1024k (digits, then b/k/m/g)"
        )
    copy_env = cfg.get("copy_env")
    if copy_env is not None and (
        not isinstance(copy_env, list) or not all(isinstance(p, str) and p for p in copy_env)
    ):
        raise SpecsError(
            "run option 'copy_env'", copy_env, "a list of variable-name globs, like FOO_*;BAR"
        )
    if cfg.get("image_repo") is not None:
        check_image_repo(cfg["image_repo"])


def _is_docker_size(text: str) -> bool:
    digits = text[:-1] if text[-1:].lower() in "bkmg" else text
    return digits.isdigit() and int(digits) > 0


def build_request(app: AppDef, app_id: str, cfg: Mapping[str, CfgVal]) -> DockerRequest:
    """The container requests for ``app`` under ``app_id`` (no checks, no randomness)."""
    network = str(cfg.get("network") or DEFAULT_NETWORK)
    first = app.roles[0]
    rank0 = "127.0.0.1" if network in ("host", "none") else _container_name(app_id, first.name, 0)
    repo = cfg.get("image_repo")
    push: dict[str, str] = {}
    copied = _copied_env(cfg.get("copy_env"))
    given_env = cfg.get("env")
    if isinstance(given_env, dict):
        copied.update({str(k): str(v) for k, v in given_env.items()})
    containers = []
    stop_grace = grace_seconds(
        "stop_grace_seconds", cfg.get("stop_grace_seconds"), DOCKER_STOP_GRACE_S
    )
    for role in app.roles:
        image = role.image
        if repo and image.startswith(WORKSPACE_REPO + ":"):
            push[image] = f"{repo}:{image.partition(':')[2]}"
            image = push[image]
        for replica in role_replicas(
            role, app_id=app_id, rank0_host=rank0, master_port=MASTER_PORT, defaults=copied
        ):
            k, filled, env = replica.k, replica.filled, replica.env
            name = _container_name(app_id, role.name, k)
            host: dict[str, Any] = {
                "NetworkMode": network,
                # Docker's 64 MiB default starves DataLoader workers that share tensors.
                "ShmSize": _docker_bytes(str(cfg.get("shm_size"))),
            }
            if cfg.get("privileged"):
                host["Privileged"] = True
            config: dict[str, Any] = {
                "Image": image,
                "Entrypoint": [filled.entrypoint],
                "Cmd": list(filled.args),
                # where a requeue writes the next attempt (the environment is fixed)
                "Env": [
                    f"{key}={value}"
                    for key, value in {**env, ATTEMPT_FILE_ENV: ATTEMPT_FILE}.items()
                ],
                "Labels": {
                    LABEL_APP_ID: app_id,
                    LABEL_APP_NAME: app.name,
                    LABEL_ROLE: role.name,
                    LABEL_REPLICA: str(k),
                    LABEL_VERSION: "1",
                },
                "HostConfig": host,
                # the warning a torchx.runtime.preemption app checkpoints on
                "StopSignal": "SIGTERM",
                "StopTimeout": stop_grace,
            }
            if network not in ("host", "none"):
                config["Hostname"] = name
            res = role.resource
            if res.cpu != -1:
                host["NanoCpus"] = round(res.cpu * 1e9)
            if res.memMB != -1:
                host["Memory"] = res.memMB * 1024 * 1024
            if res.gpu > 0:
                host["DeviceRequests"] = [
                    {"Driver": "nvidia", "Count": res.gpu, "Capabilities": [["gpu"]]}
                ]
            mounts, devices = _mounts(role)
            if mounts:
                host["Mounts"] = mounts
            if devices:
                host["Devices"] = devices
            if role.max_retries > 0:
                # Docker restarts single containers only, whatever the role's retry policy.
                host["RestartPolicy"] = {
                    "Name": "on-failure",
                    "MaximumRetryCount": role.max_retries,
                }
            containers.append(DockerContainer(role.name, k, name, config))
    return DockerRequest(app_id, containers, network, push)


def _copied_env(patterns: CfgVal) -> dict[str, str]:
    """This process's variables matching the ``copy_env`` globs (the role's env wins)."""
    if not patterns:
        return {}
    import fnmatch

    assert isinstance(patterns, list)  # checked by _check_app
    return {
        key: value
        for key, value in sorted(os.environ.items())
        if any(fnmatch.fnmatchcase(key, p) for p in patterns)
    }


def _container_name(app_id: str, role: str, k: int) -> str:
    return f"{app_id}-{to_dns_label(role, 40)}-{k}"


def _docker_bytes(size: str) -> int:
    """``64m`` -> bytes, with Docker's binary units (checked by ``_is_docker_size``)."""
    unit = size[-1:].lower()
    scale = {"b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}.get(unit)
    return int(size[:-1]) * scale if scale else int(size)


def _mounts(role: Role) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    mounts: list[dict[str, Any]] = []
    devices: list[dict[str, str]] = []
    for m in role.mounts:
        if isinstance(m, BindMount):
            mounts.append(
                {
                    "Type": "bind",
                    "Source": m.src_path,
                    "Target": m.dst_path,
                    "ReadOnly": m.read_only,
                }
            )
        elif isinstance(m, VolumeMount):
            mounts.append(
                {"Type": "volume", "Source": m.src, "Target": m.dst_path, "ReadOnly": m.read_only}
            )
    # Named devices (EFA, Neuron) are the device files they stand for, as in 0.7.
    from torchx.schedulers.devices import get_device_mounts

    named = get_device_mounts(role.resource.devices)
    for m in [*role.mounts, *named]:
        if isinstance(m, DeviceMount):
            devices.append(
                {
                    "PathOnHost": m.src_path,
                    "PathInContainer": m.dst_path,
                    "CgroupPermissions": m.permissions,
                }
            )
    return mounts, devices


class DockerScheduler(DockerWorkspaceMixin, Scheduler[DockerRequest]):
    """Runs apps as containers; see the module docstring for networking."""

    pre_proc_backend = "docker"  # pytorch/torchx 0.7's DockerScheduler backend

    def __init__(self, session_name: str = "torchx", base_url: str | None = None) -> None:
        super().__init__(BACKEND, session_name)
        self._base_url = base_url
        self._address: EngineAddress | None = None

    def _docker(self) -> Any:
        """The ``docker.DockerClient`` of the engine (found and asked its version once)."""
        return self._docker_client

    def _new_docker_client(self) -> Any:
        """The workspace mixin's client is this scheduler's: same engine, TLS and errors."""
        self._address = resolve_engine(self._base_url)
        return connect(self._address)

    def _api(self) -> Any:
        """The SDK's low-level client: it sends the dryrun's container configs as they are."""
        return self._docker().api

    @contextlib.contextmanager
    def _talking(self) -> Iterator[None]:
        """Turn a lost engine (stopped, TLS refused) into a one-line error naming the fix."""
        try:
            yield
        except Exception as e:
            # No address yet: no engine was contacted (and the SDK may not be installed).
            if self._address is None or not isinstance(e, (OSError, sdk().errors.DockerException)):
                raise
            explained = explain(self._address, e)
            if explained is e:
                raise
            raise explained from None

    def close(self) -> None:
        self._close_docker_client()

    def build_workspace_image(self, base_image: str, workspace: str, quiet: bool = True) -> str:
        with self._talking():
            return super().build_workspace_image(base_image, workspace, quiet)

    def push_images(self, images_to_push: ImagesToPush) -> None:
        with self._talking():
            super().push_images(images_to_push)

    # -- submission -------------------------------------------------------------------

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add(
            "network",
            str,
            "bridge network to join (created if missing), host or none",
            default=DEFAULT_NETWORK,
        )
        opts.add("shm_size", str, "size of /dev/shm in each container", default="2g")
        opts.add(
            "stop_grace_seconds",
            int,
            "seconds a stopped container has, after SIGTERM, to checkpoint and exit",
            default=DOCKER_STOP_GRACE_S,
        )
        opts.add(
            "copy_env",
            list,
            "globs of this process's environment variables to copy into each container "
            "(the role's env wins), e.g. FOO_*;BAR",
        )
        opts.add(
            "env",
            dict,
            "variables for every container, over those of copy_env (the role's env wins), "
            "e.g. ENV1:v1;ENV2:v2",
        )
        opts.add("privileged", bool, "run the containers privileged", default=False)
        return opts

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[DockerRequest]:
        _check_app(app, cfg)
        app_id = make_unique(to_dns_label(app.name, 40))
        return AppDryRunInfo(build_request(app, app_id, cfg), _format)

    def schedule(self, dryrun_info: AppDryRunInfo[DockerRequest]) -> str:
        req = dryrun_info.request
        with self._talking():
            return self._schedule(req)

    def _schedule(self, req: DockerRequest) -> str:
        api = self._api()
        # Each target is REPO:TAG as the dryrun made it (image_repo carries no tag).
        self.push_images({src: _repo_and_tag(dst) for src, dst in req.push.items()})
        self._ensure_images(req)
        if req.network not in ("host", "none", "bridge"):
            self._ensure_network(req.network)
        created: dict[str, str] = {}  # name -> id
        try:
            for c in req.containers:
                with refusal_named(c.name):
                    created[c.name] = api.create_container_from_config(c.config, name=c.name)["Id"]
            for name, cid in created.items():
                with refusal_named(name):  # a missing device or a port in use shows here
                    api.start(cid)
        except BaseException:
            # A refused submission leaves no container behind.
            for cid in created.values():
                with contextlib.suppress(Exception):
                    api.remove_container(cid, force=True, v=True)
            raise
        return req.app_id

    def _ensure_network(self, name: str) -> None:
        _ensure_network_on(self._api(), name)

    def _ensure_images(self, req: DockerRequest) -> None:
        """Pull what the engine lacks, as ``docker run`` would; refuse before creating anything."""
        docker = sdk()
        api = self._api()
        for image, role in {c.config["Image"]: c.role for c in req.containers}.items():
            try:
                api.inspect_image(image)
                continue
            except docker.errors.ImageNotFound:
                pass
            field = f"role {role!r} image"
            failure = _pull(api, field, image)
            if failure:
                raise SpecsError(
                    field,
                    image,
                    "an image the Docker engine has or can pull; it has no such image and "
                    f"pulling failed ({failure}); build or load it first, `docker login "
                    f"{_registry_of(image)}` if the registry needs credentials, or give the "
                    "component another image (builtins take --image)",
                )

    # -- inspection -------------------------------------------------------------------

    def _inspect_all(self, label: str) -> list[dict[str, Any]]:
        """Every container (running or not) with ``label``, as ``docker inspect`` shows it."""
        not_found = sdk().errors.NotFound
        with self._talking():
            api = self._api()
            attrs = []
            for summary in api.containers(all=True, filters={"label": [label]}):
                try:
                    attrs.append(api.inspect_container(summary["Id"]))
                except not_found:  # removed between the list and the inspect
                    continue
            return attrs

    def _containers(self, app_id: str) -> list[dict[str, Any]]:
        return self._inspect_all(f"{LABEL_APP_ID}={app_id}")

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        containers = self._containers(app_id)
        if not containers:
            return None
        return self._described(app_id, containers)

    def _described(self, app_id: str, containers: list[dict[str, Any]]) -> DescribeAppResponse:
        desc = _describe(app_id, containers)
        replicas = [c for c in containers if LABEL_CANCELLED not in c["Config"]["Labels"]]
        if replicas:
            with self._talking():
                # requeues are counted apart from Docker's own restarts (retries)
                desc.num_preemptions = read_attempt(
                    self._api(), replicas[0]["Id"], sdk().errors.NotFound
                )
        return desc

    def requeue(self, app_id: str) -> DescribeAppResponse | None:
        """Stand in for a preemption: every replica's container is warned (SIGTERM), has
        ``stop_grace_seconds`` to checkpoint and exit, and is started again, the same
        container under the same handle, its next ``attempt()`` one more. None for an
        unknown app; an ended app is refused (run it again instead)."""
        containers = self._containers(app_id)
        replicas = [c for c in containers if LABEL_CANCELLED not in c["Config"]["Labels"]]
        if not replicas:
            return None
        desc = _describe(app_id, containers)
        if is_terminal(desc.state):
            raise SchedulerError(
                BACKEND,
                f"app {app_id} has already ended ({desc.state.name}); only a running app "
                "can be requeued",
                "run it again; the app resumes if it reads its checkpoint",
            )
        with self._talking():
            api = self._api()
            attempt = read_attempt(api, replicas[0]["Id"], sdk().errors.NotFound) + 1
            requeue_containers(api, replicas, attempt)
        return self.describe(app_id)

    def wait(self, app_id: str, timeout: float | None = None) -> DescribeAppResponse | None:
        """Block on the engine's own wait for each container instead of polling."""
        import time

        errors = sdk().errors
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            containers = self._containers(app_id)
            if not containers:
                return None
            desc = _describe(app_id, containers)
            left = None if deadline is None else deadline - time.monotonic()
            if is_terminal(desc.state) or (left is not None and left <= 0):
                return self._described(app_id, containers)
            running = next((c for c in containers if _status(c) == "running"), None)
            if running is None:  # created, not yet started, or between restarts
                time.sleep(0.05)
                continue
            # Bounded, so a restart or a late sibling is noticed on the next round. A read
            # timeout is an OSError; a lost engine shows on the next round's listing.
            with contextlib.suppress(OSError, errors.APIError):
                self._api().wait(
                    running["Id"],
                    timeout=min(left, 5.0) if left is not None else 5.0,
                    condition="not-running",
                )

    def list(self) -> list[ListAppResponse]:
        by_app: dict[str, list[dict[str, Any]]] = {}
        for found in self._inspect_all(LABEL_APP_ID):
            by_app.setdefault(found["Config"]["Labels"][LABEL_APP_ID], []).append(found)
        out = []
        for app_id, attrs in sorted(by_app.items()):
            d = _describe(app_id, attrs)
            replica = next(
                (a for a in attrs if LABEL_CANCELLED not in a["Config"]["Labels"]), attrs[0]
            )
            out.append(
                ListAppResponse(
                    app_id,
                    d.state,
                    name=replica["Config"]["Labels"].get(LABEL_APP_NAME, ""),
                    sweep=_sweep_of(replica["Config"].get("Env") or []),
                    **run_times(attrs, replica, d.state),
                )
            )
        return out

    def _replica_log(self, request: LogRequest) -> Iterable[str]:
        return decoded_lines(self._explained(self._log_chunks(request, timestamps=False)))

    def _replica_log_timed(self, request: LogRequest) -> Iterable[tuple[datetime | None, str]]:
        chunks = self._explained(self._log_chunks(request, timestamps=True))
        return (_stamped(line) for line in decoded_lines(chunks))

    def _log_chunks(self, request: LogRequest, timestamps: bool) -> Iterator[bytes]:
        role_name, k, stream = request.role_name, request.k, request.stream
        matches = [
            c
            for c in self._containers(request.app_id)
            if c["Config"]["Labels"].get(LABEL_ROLE) == role_name
            and c["Config"]["Labels"].get(LABEL_REPLICA) == str(k)
        ]
        if not matches:
            raise SpecsError(
                "replica",
                f"{role_name}/{k}",
                f"no such container in app {request.app_id}; `describe` lists its replicas",
            )
        with self._talking():
            chunks: Iterator[bytes] = self._api().logs(
                matches[0]["Id"],
                stdout=stream in (Stream.STDOUT, Stream.COMBINED),
                stderr=stream in (Stream.STDERR, Stream.COMBINED),
                stream=True,
                follow=request.follow,
                # Seconds as floats: the engine keeps the sub-second part.
                since=None if request.since is None else request.since.timestamp(),
                until=None if request.until is None else request.until.timestamp(),
                timestamps=timestamps,
            )
            if not request.follow:
                chunks = iter(list(chunks))  # read it all now: the container may go away later
        return chunks

    def _explained(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """A followed log, read under ``_talking``: an engine lost meanwhile is one line."""
        with self._talking():
            yield from chunks

    # -- control ----------------------------------------------------------------------

    def _cancel_existing(self, app_id: str) -> None:
        containers = self._containers(app_id)
        if not containers:
            return  # gone since it was found
        desc = _describe(app_id, containers)
        if desc.state in (AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED):
            return
        errors = sdk().errors
        # A created-never-started marker records the cancellation in the engine itself, so
        # every process (and `list`) sees CANCELLED rather than the replicas' kill status.
        marker = {
            "Image": containers[0]["Config"]["Image"],
            "Entrypoint": ["true"],
            "Cmd": [],
            "Labels": {LABEL_APP_ID: app_id, LABEL_CANCELLED: "1"},
            "HostConfig": {"NetworkMode": "none"},
        }
        with self._talking():
            api = self._api()
            try:
                api.create_container_from_config(marker, name=f"{app_id}-cancelled")
            except errors.APIError as e:
                if e.status_code != 409:  # 409: another process is cancelling it too
                    raise
            for c in containers:
                api.stop(c["Id"], timeout=5)


def _sweep_of(env: list[str]) -> str:
    """The sweep a container's app is a trial of, from its environment (``K=V`` items, as
    ``docker inspect`` gives it): a trial's every replica has its sweep's id and index."""
    found = dict(item.partition("=")[::2] for item in env)
    return sweep_trial(found.get(ENV_SWEEP_ID), found.get(ENV_SWEEP_INDEX))


def _repo_and_tag(pushed: str) -> tuple[str, str]:
    repo, _, tag = pushed.rpartition(":")
    return repo, tag


def _registry_of(image: str) -> str:
    """The registry host of an image reference, as ``docker login`` names it."""
    repo = image.partition("@")[0]
    head, sep, tag = repo.rpartition(":")
    if sep and "/" not in tag:
        repo = head
    return str(sdk().auth.resolve_repository_name(repo)[0])


def _pull(api: Any, field: str, image: str) -> str | None:
    """Pull ``image``; the failure the engine reports, if any.

    docker login's store is read again first, so a login since the client was made counts;
    the SDK asks the credential helper that store names.
    """
    import warnings

    errors = sdk().errors
    api.reload_config()
    try:
        with warnings.catch_warnings():
            # The SDK warns of a missing helper, then raises; the error below says it once.
            warnings.simplefilter("ignore", UserWarning)
            return _stream_failure(api.pull(image, stream=True, decode=True))
    except errors.APIError as e:
        return str(e.explanation or e)
    except errors.DockerException as e:  # the credential helper failed or is missing
        raise credential_helper_failed(BACKEND, f"pulling {image} for {field}", e) from None


def _stream_failure(messages: Iterable[Mapping[str, Any]]) -> str | None:
    """The last error a pull or push reported in its progress stream (the engine answers
    200 at once and reports failures inside the stream)."""
    failure = None
    for m in messages:
        if m.get("error"):
            failure = str(m["error"])
    return failure


def create_scheduler(
    session_name: str, base_url: str | None = None, **params: Any
) -> DockerScheduler:
    """The local_docker factory; ``base_url`` (the engine, as DOCKER_HOST names it) is its
    only parameter."""
    check_params(BACKEND, params, ("base_url",))
    return DockerScheduler(session_name, base_url=base_url)


def _ensure_network_on(api: Any, name: str) -> None:
    """Create bridge network ``name`` through the SDK's low-level client unless it exists."""
    errors = sdk().errors
    try:
        api.inspect_network(name)
        return
    except errors.NotFound:
        pass
    try:
        api.create_network(
            name,
            driver="bridge",
            check_duplicate=True,
            labels={"torchx.pytorch.org/network": "1"},
        )
    except errors.APIError as e:
        if e.status_code != 409:  # 409: another submission created it meanwhile
            raise SpecsError(
                "run option 'network'",
                name,
                f"a network the engine can create ({e.explanation}); use host or none, "
                "or create the network with `docker network create`",
            ) from None


def ensure_network(client: Any = None, name: str = NETWORK) -> None:
    """Create the bridge network replicas share (``torchx`` by default) unless it exists.

    ``client``: a ``docker.DockerClient``; by default one for the engine the docker CLI uses.
    """
    if client is None:
        client = connect(resolve_engine())
    _ensure_network_on(client.api, name)
