"""local_docker: runs every replica as a container on the local Docker engine.

Containers carry labels naming their app, role and replica, so ``describe``, ``log_iter``,
``cancel`` and ``list`` work from any process through the engine alone. Containers are run
through a small stdlib client of the Engine API (``_docker_engine``; the engine is found as
the docker CLI finds it: ``DOCKER_HOST``, then the current Docker context). The Docker SDK
(``pip install "torchx-schedulers[docker]"``) builds and pushes workspace images, through
:class:`~torchx.workspace.docker_workspace.DockerWorkspaceMixin`; pulls use the docker
CLI's stored credentials (``_docker_auth``).

Networking (run option ``network``):

- ``torchx`` (default) or any bridge network name: created if missing; replica ``k`` of
  role ``r`` is reachable by its hostname ``<app_id>-<r>-<k>``;
- ``host``: the replicas share the host's network and reach each other on 127.0.0.1;
- ``none``: no network at all (single-replica apps).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

from torchx.schedulers._api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    filter_regex,
)
from torchx.schedulers._container_rules import (
    check_device_counts,
    check_image,
    check_resources,
    to_dns_label,
)
from torchx.schedulers._docker_auth import auth_header, registry_of, split_reference
from torchx.schedulers._docker_engine import Engine, EngineError, NotFound, path_quote
from torchx.schedulers._errors import SchedulerError, check_params, require
from torchx.schedulers._replica_env import TORCHX_RANK0_HOST, launch_defaults, replica_env
from torchx.schedulers.ids import make_unique
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    BindMount,
    CfgVal,
    DeviceMount,
    ReplicaStatus,
    Role,
    RoleStatus,
    SpecsError,
    VolumeMount,
    is_terminal,
    macros,
    runopts,
)
from torchx.workspace.docker_workspace import WORKSPACE_REPO, DockerWorkspaceMixin

BACKEND = "local_docker"
EXTRA = "docker"
MASTER_PORT = 29500
DEFAULT_NETWORK = "torchx"

LABEL_APP_ID = "torchx.pytorch.org/app-id"
LABEL_APP_NAME = "torchx.pytorch.org/app-name"
LABEL_ROLE = "torchx.pytorch.org/role-name"
LABEL_REPLICA = "torchx.pytorch.org/replica-id"
LABEL_CANCELLED = "torchx.pytorch.org/cancelled"
LABEL_VERSION = "torchx.pytorch.org/version"


@dataclass
class DockerContainer:
    """One replica: ``POST /containers/create?name=NAME`` with ``config`` as its JSON body."""

    role: str
    replica_id: int
    name: str
    config: dict[str, Any]


class DockerOpts(TypedDict, total=False):
    """The local_docker run options, typed."""

    network: str
    shm_size: str
    image_repo: str
    quiet: bool


@dataclass
class DockerRequest:
    """Every container of one app, created and started in order by ``schedule``."""

    app_id: str
    containers: list[DockerContainer]
    network: str
    # workspace image -> the repository tag it is pushed as before the app starts
    push: dict[str, str] = field(default_factory=dict)


# pytorch/torchx's name for the request.
DockerJob = DockerRequest


def _format(req: DockerRequest) -> str:
    import json

    out = [f"app_id: {req.app_id}", f"network: {req.network}"]
    out += [f"push: {src} -> {dst}" for src, dst in sorted(req.push.items())]
    for c in req.containers:
        out.append(
            f"{c.role}/{c.replica_id}: POST /containers/create?name={c.name} "
            + json.dumps(c.config, sort_keys=True)
        )
    return "\n".join(out)


def _check_app(app: AppDef, cfg: Mapping[str, CfgVal]) -> None:
    if not app.roles:
        raise SpecsError("app.roles", [], "an app needs at least one role")
    names: set[str] = set()
    for role in app.roles:
        where = f"role {role.name!r}"
        check_image(f"{where} image", role.image)
        res = role.resource
        check_resources(f"{where} resource", res.cpu, res.gpu, res.memMB)
        check_device_counts(f"{where} resource.devices", res.devices)
        if res.memMB != -1 and res.memMB < 6:
            raise SpecsError(f"{where} resource.memMB", res.memMB, "Docker needs at least 6 MiB")
        if not role.entrypoint:
            raise SpecsError(f"{where} entrypoint", role.entrypoint, "give the program to run")
        if not isinstance(role.num_replicas, int) or role.num_replicas < 1:
            raise SpecsError(f"{where} num_replicas", role.num_replicas, "a whole number >= 1")
        name = to_dns_label(role.name, 40)
        if name in names:
            raise SpecsError(f"{where} name", role.name, f"another role is also named {name!r}")
        names.add(name)
    shm = cfg.get("shm_size")
    if not isinstance(shm, str) or not _is_docker_size(shm):
        raise SpecsError(
            "run option 'shm_size'", shm, "a size like 64m, 2g or 1024k (digits, then b/k/m/g)"
        )
    repo = cfg.get("image_repo")
    if repo is not None:
        check_image("run option 'image_repo'", str(repo))
        if ":" in str(repo).rsplit("/", 1)[-1]:
            raise SpecsError("run option 'image_repo'", repo, "give a repository without a tag")


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
    containers = []
    for role in app.roles:
        image = role.image
        if repo and image.startswith(WORKSPACE_REPO + ":"):
            push[image] = f"{repo}:{image.partition(':')[2]}"
            image = push[image]
        for k in range(role.num_replicas):
            filled = macros.Values(
                img_root="", app_id=app_id, replica_id=str(k), rank0_env=TORCHX_RANK0_HOST
            ).apply(role)
            name = _container_name(app_id, role.name, k)
            env = replica_env(
                filled.env,
                app_id=app_id,
                role_name=role.name,
                replica_id=str(k),
                rank0_host=rank0,
                defaults=launch_defaults(
                    master_addr=rank0,
                    master_port=MASTER_PORT,
                    rank=k,
                    world_size=role.num_replicas,
                ),
            )
            host: dict[str, Any] = {
                "NetworkMode": network,
                # Docker's 64 MiB default starves DataLoader workers that share tensors.
                "ShmSize": _docker_bytes(str(cfg.get("shm_size"))),
            }
            config: dict[str, Any] = {
                "Image": image,
                "Entrypoint": [filled.entrypoint],
                "Cmd": list(filled.args),
                "Env": [f"{key}={value}" for key, value in env.items()],
                "Labels": {
                    LABEL_APP_ID: app_id,
                    LABEL_APP_NAME: app.name,
                    LABEL_ROLE: role.name,
                    LABEL_REPLICA: str(k),
                    LABEL_VERSION: "1",
                },
                "HostConfig": host,
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
        elif isinstance(m, DeviceMount):
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

    def __init__(self, session_name: str = "torchx", base_url: str | None = None) -> None:
        super().__init__(BACKEND, session_name)
        self._base_url = base_url
        self._engine_client: Engine | None = None

    def _engine(self) -> Engine:
        if self._engine_client is None:
            self._engine_client = Engine.from_env(self._base_url)
        return self._engine_client

    def _new_docker_client(self) -> Any:
        """The Docker SDK's client for the same engine (workspace builds and pushes)."""
        docker = require("docker", scheduler=BACKEND, extra=EXTRA)
        endpoint = self._engine().endpoint
        tls: Any = None
        if endpoint.tls is not None:
            t = endpoint.tls
            tls = docker.tls.TLSConfig(  # type: ignore[attr-defined]
                client_cert=(t.cert, t.key) if t.cert and t.key else None,
                ca_cert=t.ca,
                verify=t.verify,
            )
        host = endpoint.host.replace("https://", "tcp://", 1)
        return docker.DockerClient(base_url=host, tls=tls)  # type: ignore[attr-defined]

    def close(self) -> None:
        if self._engine_client is not None:
            self._engine_client.close()
            self._engine_client = None
        self._close_docker_client()

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
        return opts

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[DockerRequest]:
        _check_app(app, cfg)
        app_id = make_unique(to_dns_label(app.name, 40))
        return AppDryRunInfo(build_request(app, app_id, cfg), _format)

    def schedule(self, dryrun_info: AppDryRunInfo[DockerRequest]) -> str:
        req = dryrun_info.request
        engine = self._engine()
        self.push_images({src: split_reference(dst) for src, dst in req.push.items()})
        self._ensure_images(req)
        if req.network not in ("host", "none", "bridge"):
            self._ensure_network(req.network)
        created: list[str] = []
        try:
            for c in req.containers:
                answer = engine.request(
                    "POST", "/containers/create", {"name": c.name}, body=c.config
                )
                created.append(answer["Id"])
            for cid in created:
                engine.request("POST", f"/containers/{cid}/start")
        except BaseException:
            # A refused submission leaves no container behind.
            for cid in created:
                with contextlib.suppress(EngineError, OSError):
                    engine.request("DELETE", f"/containers/{cid}", {"force": True, "v": True})
            raise
        return req.app_id

    def _ensure_network(self, name: str) -> None:
        engine = self._engine()
        try:
            engine.request("GET", f"/networks/{path_quote(name)}")
            return
        except NotFound:
            pass
        try:
            engine.request(
                "POST",
                "/networks/create",
                body={
                    "Name": name,
                    "Driver": "bridge",
                    "CheckDuplicate": True,
                    "Labels": {"torchx.pytorch.org/network": "1"},
                },
            )
        except EngineError as e:
            if e.status != 409:  # 409: another submission created it meanwhile
                raise SpecsError(
                    "run option 'network'",
                    name,
                    f"a network the engine can create ({e.message}); use host or none, "
                    "or create the network with `docker network create`",
                ) from None

    def _ensure_images(self, req: DockerRequest) -> None:
        """Pull what the engine lacks, as ``docker run`` would; refuse before creating anything."""
        engine = self._engine()
        for image, role in {c.config["Image"]: c.role for c in req.containers}.items():
            try:
                engine.request("GET", f"/images/{path_quote(image)}/json")
                continue
            except NotFound:
                pass
            repo, ref = split_reference(image)
            try:
                messages = engine.progress(
                    "/images/create",
                    {"fromImage": repo, "tag": ref},
                    {"X-Registry-Auth": auth_header(image)},
                )
            except EngineError as e:
                messages = [{"error": e.message}]
            failed = [str(m["error"]) for m in messages if m.get("error")]
            if failed:
                raise SpecsError(
                    f"role {role!r} image",
                    image,
                    "an image the Docker engine has or can pull; it has no such image and "
                    f"pulling failed ({failed[-1]}); build or load it first, `docker login "
                    f"{registry_of(image)}` if the registry needs credentials, or give the "
                    "component another image (builtins take --image)",
                )

    # -- inspection -------------------------------------------------------------------

    def _inspect_all(self, label: str) -> list[dict[str, Any]]:
        """Every container (running or not) with ``label``, as ``docker inspect`` shows it."""
        engine = self._engine()
        listed = engine.request(
            "GET", "/containers/json", {"all": True, "filters": {"label": [label]}}
        )
        attrs = []
        for summary in listed or []:
            try:
                attrs.append(engine.request("GET", f"/containers/{summary['Id']}/json"))
            except NotFound:  # removed between the list and the inspect
                continue
        return attrs

    def _containers(self, app_id: str) -> list[dict[str, Any]]:
        return self._inspect_all(f"{LABEL_APP_ID}={app_id}")

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        containers = self._containers(app_id)
        if not containers:
            return None
        return _describe(app_id, containers)

    def wait(self, app_id: str, timeout: float | None = None) -> DescribeAppResponse | None:
        """Block on the engine's own wait for each container instead of polling."""
        import time

        engine = self._engine()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            containers = self._containers(app_id)
            if not containers:
                return None
            desc = _describe(app_id, containers)
            if is_terminal(desc.state):
                return desc
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return desc
            running = next((c for c in containers if _status(c) == "running"), None)
            if running is None:  # created, not yet started, or between restarts
                time.sleep(0.05)
                continue
            # Bounded, so a restart or a late sibling is noticed on the next round.
            with contextlib.suppress(EngineError, OSError):
                engine.request(
                    "POST",
                    f"/containers/{running['Id']}/wait",
                    {"condition": "not-running"},
                    timeout=min(left, 5.0) if left is not None else 5.0,
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
            created = _parse_time(replica.get("Created", ""))
            out.append(
                ListAppResponse(
                    app_id, d.state, replica["Config"]["Labels"].get(LABEL_APP_NAME, ""), created
                )
            )
        return out

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
        stream = Stream(streams) if streams is not None else Stream.COMBINED
        matches = [
            c
            for c in self._containers(app_id)
            if c["Config"]["Labels"].get(LABEL_ROLE) == role_name
            and c["Config"]["Labels"].get(LABEL_REPLICA) == str(k)
        ]
        if not matches:
            raise SpecsError(
                "replica",
                f"{role_name}/{k}",
                f"no such container in app {app_id}; `describe` lists its replicas",
            )
        params: dict[str, Any] = {
            "stdout": stream in (Stream.STDOUT, Stream.COMBINED),
            "stderr": stream in (Stream.STDERR, Stream.COMBINED),
            "follow": should_tail,
        }
        if since is not None:
            params["since"] = f"{since.timestamp():.9f}"
        if until is not None:
            params["until"] = f"{until.timestamp():.9f}"
        container = matches[0]
        frames = self._engine().stream(
            f"/containers/{container['Id']}/logs",
            params,
            tty=bool(container["Config"].get("Tty")),
        )
        chunks: Iterator[bytes] = (data for _stream, data in frames)
        if not should_tail:
            chunks = iter(list(chunks))  # read it all now: the container may go away later
        return filter_regex(regex, _lines(chunks))

    # -- control ----------------------------------------------------------------------

    def _cancel_existing(self, app_id: str) -> None:
        containers = self._containers(app_id)
        if not containers:
            return  # gone since it was found
        desc = _describe(app_id, containers)
        if desc.state in (AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED):
            return
        engine = self._engine()
        # A created-never-started marker records the cancellation in the engine itself, so
        # every process (and `list`) sees CANCELLED rather than the replicas' kill status.
        marker = {
            "Image": containers[0]["Config"]["Image"],
            "Entrypoint": ["true"],
            "Cmd": [],
            "Labels": {LABEL_APP_ID: app_id, LABEL_CANCELLED: "1"},
            "HostConfig": {"NetworkMode": "none"},
        }
        try:
            engine.request("POST", "/containers/create", {"name": f"{app_id}-cancelled"}, marker)
        except EngineError as e:
            if e.status != 409:  # 409: another process is cancelling it too
                raise
        for c in containers:
            engine.request("POST", f"/containers/{c['Id']}/stop", {"t": 5})


def _status(attrs: Mapping[str, Any]) -> str:
    return str(attrs.get("State", {}).get("Status", ""))


def _lines(chunks: Iterable[bytes]) -> Iterator[str]:
    pending = b""
    for chunk in chunks:
        pending += chunk
        *done, pending = pending.split(b"\n")
        for line in done:
            yield line.decode("utf-8", "replace") + "\n"
    if pending:
        yield pending.decode("utf-8", "replace")


def _parse_time(text: str) -> datetime | None:
    head, _, frac = text.rstrip("Z").partition(".")
    try:
        t = datetime.fromisoformat(head)
    except ValueError:
        return None
    return t.replace(microsecond=int(frac[:6].ljust(6, "0"))) if frac.isdigit() else t


def _replica_state(attrs: Mapping[str, Any]) -> AppState:
    state = attrs.get("State", {})
    status = state.get("Status", "")
    if status == "created":
        return AppState.PENDING
    if status in ("running", "restarting", "paused"):
        return AppState.RUNNING
    if status in ("exited", "dead"):
        return AppState.SUCCEEDED if state.get("ExitCode") == 0 else AppState.FAILED
    return AppState.UNKNOWN


def _describe(app_id: str, attrs: list[dict[str, Any]]) -> DescribeAppResponse:
    cancelled = any(LABEL_CANCELLED in a["Config"]["Labels"] for a in attrs)
    replicas = [a for a in attrs if LABEL_CANCELLED not in a["Config"]["Labels"]]
    roles: dict[str, RoleStatus] = {}
    states = []
    restarts = 0
    for a in sorted(replicas, key=lambda a: int(a["Config"]["Labels"].get(LABEL_REPLICA, 0))):
        labels = a["Config"]["Labels"]
        role = labels.get(LABEL_ROLE, "")
        state = _replica_state(a)
        states.append(state)
        restarts += int(a.get("RestartCount", 0))
        exit_code = (
            a.get("State", {}).get("ExitCode") if state.name in ("SUCCEEDED", "FAILED") else None
        )
        roles.setdefault(role, RoleStatus(role)).replicas.append(
            ReplicaStatus(
                id=int(labels.get(LABEL_REPLICA, 0)),
                state=state,
                role=role,
                hostname=a.get("Config", {}).get("Hostname", ""),
                exit_code=exit_code,
            )
        )
    if AppState.FAILED in states:
        overall = AppState.FAILED
    elif AppState.RUNNING in states or (
        AppState.PENDING in states and AppState.SUCCEEDED in states
    ):
        overall = AppState.RUNNING
    elif AppState.PENDING in states:
        overall = AppState.PENDING
    elif states and all(s == AppState.SUCCEEDED for s in states):
        overall = AppState.SUCCEEDED
    else:
        overall = AppState.UNKNOWN
    if cancelled and overall != AppState.SUCCEEDED:
        overall = AppState.CANCELLED
    failed = [r for rs in roles.values() for r in rs.replicas if r.state == AppState.FAILED]
    msg = ", ".join(f"{r.role}/{r.id} exited with {r.exit_code}" for r in failed)
    app_roles = _roles_of(replicas)
    app_name = replicas[0]["Config"]["Labels"].get(LABEL_APP_NAME, app_id) if replicas else app_id
    return DescribeAppResponse(
        app_id=app_id,
        state=overall,
        num_restarts=restarts,
        msg=msg,
        roles_statuses=list(roles.values()),
        roles=app_roles,
        app=AppDef(app_name, roles=app_roles) if app_roles else None,
    )


def _roles_of(replicas: list[dict[str, Any]]) -> list[Role]:
    """The roles as replica 0 of each was created (another process can then address them)."""
    counts: dict[str, int] = {}
    first: dict[str, dict[str, Any]] = {}
    for a in replicas:
        role = a["Config"]["Labels"].get(LABEL_ROLE, "")
        counts[role] = counts.get(role, 0) + 1
        if a["Config"]["Labels"].get(LABEL_REPLICA) == "0":
            first[role] = a["Config"]
    out = []
    for role, config in first.items():
        entrypoint = config.get("Entrypoint") or [""]
        out.append(
            Role(
                role,
                image=config.get("Image", ""),
                entrypoint=entrypoint[0],
                args=[*entrypoint[1:], *(config.get("Cmd") or [])],
                num_replicas=counts[role],
            )
        )
    return out


def create_scheduler(
    session_name: str, base_url: str | None = None, **params: Any
) -> DockerScheduler:
    """The local_docker factory; ``base_url`` (the engine, as DOCKER_HOST names it) is its
    only parameter."""
    check_params(BACKEND, params, ("base_url",))
    return DockerScheduler(session_name, base_url=base_url)


def has_docker() -> bool:
    """Whether a Docker engine answers where DOCKER_HOST (or the current context) points."""
    try:
        engine = Engine.from_env()
        try:
            engine.request("GET", "/_ping")
        finally:
            engine.close()
    except (SchedulerError, SpecsError, OSError):
        return False
    return True
