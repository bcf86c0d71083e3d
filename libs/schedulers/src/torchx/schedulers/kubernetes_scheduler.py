"""kubernetes: runs an app as a Volcano Job, or as batch/v1 Jobs behind a headless Service.

The manifests are plain dicts (what ``kubectl apply`` would read); dryrun prints them as
YAML and ``schedule`` submits them unchanged through the kubernetes Python client, which is
imported only when the API is called.

Where replicas find each other:

- Volcano (``-cfg api=volcano``, the default): one task per role; Volcano's ``svc`` plugin
  names pod ``k`` of task ``role`` ``<app_id>-<role>-<k>`` in the DNS subdomain ``<app_id>``,
  and its ``env`` plugin sets ``VC_TASK_INDEX`` (the replica id).
- batch (``-cfg api=batch``): one Indexed Job ``<app_id>-<role>`` per role plus a headless
  Service ``<app_id>``; pod ``k`` gets the hostname ``<app_id>-<role>-<k>`` and the job
  controller sets ``JOB_COMPLETION_INDEX``.

Either way replica 0 of the first role is ``<app_id>-<role0>-0.<app_id>``, exported as
``TORCHX_RANK0_HOST`` (and ``MASTER_ADDR``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
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
    check_label_key,
    check_label_value,
    check_labels,
    check_resources,
    to_dns_label,
)
from torchx.schedulers._errors import check_params, require
from torchx.schedulers._replica_env import TORCHX_RANK0_HOST, replica_env
from torchx.schedulers.ids import make_unique
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    BindMount,
    CfgVal,
    DeviceMount,
    ReplicaStatus,
    RetryPolicy,
    Role,
    RoleStatus,
    SpecsError,
    VolumeMount,
    macros,
    runopts,
)
from torchx.workspace.docker_workspace import WORKSPACE_REPO, DockerWorkspaceMixin

BACKEND = "kubernetes"
EXTRA = "kubernetes"
MASTER_PORT = 29500
GPU_RESOURCE = "nvidia.com/gpu"

LABEL_PREFIX = "torchx.pytorch.org"
LABEL_APP_ID = f"{LABEL_PREFIX}/app-id"
LABEL_APP_NAME = f"{LABEL_PREFIX}/app-name"
LABEL_ROLE = f"{LABEL_PREFIX}/role-name"
LABEL_MANAGED = "app.kubernetes.io/managed-by"
CANCELLED_ANNOTATION = f"{LABEL_PREFIX}/cancelled"

VOLCANO_GROUP = "batch.volcano.sh"
VOLCANO_VERSION = "v1alpha1"
VOLCANO_PLURAL = "jobs"
APIS = ("volcano", "batch")

# Volcano lifecycle actions per retry policy: what is restarted when a pod fails.
_VOLCANO_ACTIONS = {
    RetryPolicy.APPLICATION: "RestartJob",
    RetryPolicy.ROLE: "RestartTask",
    RetryPolicy.REPLICA: "RestartPod",
}


@dataclass
class KubernetesRequest:
    """The objects ``schedule`` creates, in order, in ``namespace``."""

    app_id: str
    namespace: str
    api: str
    manifests: list[dict[str, Any]] = field(default_factory=list)
    # workspace image -> the repository tag it is pushed as (through the Docker engine) first
    push: dict[str, str] = field(default_factory=dict)


def _format(req: KubernetesRequest) -> str:
    import yaml

    pushes = "".join(f"# push: {src} -> {dst}\n" for src, dst in sorted(req.push.items()))
    return pushes + yaml.safe_dump_all(req.manifests, sort_keys=False)


def _quantity_cpu(cpu: float) -> str:
    return f"{round(cpu * 1000)}m"


def _container_resources(role: Role) -> dict[str, Any]:
    res = role.resource
    amounts: dict[str, str] = {}
    if res.cpu != -1:
        amounts["cpu"] = _quantity_cpu(res.cpu)
    if res.memMB != -1:
        amounts["memory"] = f"{res.memMB}Mi"
    if res.gpu > 0:
        amounts[GPU_RESOURCE] = str(res.gpu)
    for name, count in sorted(res.devices.items()):
        amounts[name] = str(count)
    # Requests equal to limits: the pod gets the Guaranteed QoS class and is not
    # squeezed by neighbours mid-training.
    return {"requests": dict(amounts), "limits": dict(amounts)} if amounts else {}


# A Kubernetes resource quantity (apimachinery's format): digits, then a binary or
# decimal suffix or an exponent.
_QUANTITY = re.compile(r"^\+?(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[mkMGTPE]|[eE][+-]?\d+)?$")


def _volumes(role: Role, shm_size: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pod volumes and the container's mounts: shm first, then the role's mounts."""
    shm: dict[str, Any] = {"medium": "Memory"}
    if shm_size:
        if not _QUANTITY.match(str(shm_size)):
            raise SpecsError(
                "run option 'shm_size'",
                shm_size,
                "give a Kubernetes quantity: a number with an optional suffix, e.g. 512Mi or 8Gi",
            )
        shm["sizeLimit"] = shm_size
    volumes: list[dict[str, Any]] = [{"name": "dshm", "emptyDir": shm}]
    mounts: list[dict[str, Any]] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    for i, m in enumerate(role.mounts):
        name = f"mount-{i}"
        if isinstance(m, BindMount):
            volumes.append({"name": name, "hostPath": {"path": m.src_path}})
            mounts.append({"name": name, "mountPath": m.dst_path, "readOnly": m.read_only})
        elif isinstance(m, VolumeMount):
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": m.src}})
            mounts.append({"name": name, "mountPath": m.dst_path, "readOnly": m.read_only})
        elif isinstance(m, DeviceMount):
            volumes.append({"name": name, "hostPath": {"path": m.src_path, "type": "CharDevice"}})
            mounts.append(
                {"name": name, "mountPath": m.dst_path, "readOnly": "w" not in m.permissions}
            )
    return volumes, mounts


def _check_app(app: AppDef, cfg: Mapping[str, CfgVal]) -> None:
    if not app.roles:
        raise SpecsError("app.roles", [], "an app needs at least one role")
    seen: set[str] = set()
    for role in app.roles:
        where = f"role {role.name!r}"
        check_image(f"{where} image", role.image)
        check_resources(
            f"{where} resource", role.resource.cpu, role.resource.gpu, role.resource.memMB
        )
        check_device_counts(f"{where} resource.devices", role.resource.devices)
        if not role.entrypoint:
            raise SpecsError(f"{where} entrypoint", role.entrypoint, "give the program to run")
        if not isinstance(role.num_replicas, int) or role.num_replicas < 1:
            raise SpecsError(f"{where} num_replicas", role.num_replicas, "a whole number >= 1")
        task = to_dns_label(role.name, 20)
        if task in seen:
            raise SpecsError(
                f"{where} name",
                role.name,
                f"two roles map to the same task name {task!r}; "
                "rename one (lowercase letters, digits and '-')",
            )
        seen.add(task)
        for m in role.mounts:
            if isinstance(m, VolumeMount):
                check_label_value(f"{where} mount src (a PVC name)", m.src)
    check_labels("run option 'labels'", dict(cfg.get("labels") or {}))  # type: ignore[arg-type]
    check_labels("run option 'node_selector'", dict(cfg.get("node_selector") or {}))  # type: ignore[arg-type]
    repo = cfg.get("image_repo")
    if repo is not None:
        check_image("run option 'image_repo'", str(repo))
        if ":" in str(repo).rsplit("/", 1)[-1]:
            raise SpecsError("run option 'image_repo'", repo, "give a repository without a tag")
    elif any(r.image.startswith(WORKSPACE_REPO + ":") for r in app.roles):
        raise SpecsError(
            "run option 'image_repo'",
            None,
            "a cluster cannot pull a workspace image built on this machine; name a "
            "repository to push it to (-cfg image_repo=REGISTRY/REPO)",
        )
    api = cfg.get("api")
    if api not in APIS:
        raise SpecsError("run option 'api'", api, "use volcano or batch")
    namespace = cfg.get("namespace")
    if not isinstance(namespace, str) or to_dns_label(namespace) != namespace:
        raise SpecsError(
            "run option 'namespace'",
            namespace,
            "a namespace is a DNS label: lowercase letters, digits and '-', at most 63",
        )


class KubernetesScheduler(DockerWorkspaceMixin, Scheduler[KubernetesRequest]):
    """Submits apps to a Kubernetes cluster; see the module docstring for the layout.

    Workspaces are built into images on the local Docker engine and pushed to
    ``image_repo`` at submit (:class:`~torchx.workspace.docker_workspace.DockerWorkspaceMixin`).
    """

    def __init__(self, session_name: str = "torchx", client: Any = None) -> None:
        super().__init__(BACKEND, session_name)
        self._api_client = client

    # -- API access -------------------------------------------------------------------

    def _client(self) -> Any:
        if self._api_client is None:
            k8s = require("kubernetes", scheduler=BACKEND, extra=EXTRA)
            config = k8s.config  # type: ignore[attr-defined]
            try:
                config.load_incluster_config()
            except config.ConfigException:
                config.load_kube_config()
            self._api_client = k8s.client.ApiClient()  # type: ignore[attr-defined]
        return self._api_client

    def _apis(self) -> Any:
        return require("kubernetes.client", scheduler=BACKEND, extra=EXTRA)

    def close(self) -> None:
        self._close_docker_client()

    # -- submission -------------------------------------------------------------------

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("namespace", str, "Kubernetes namespace to create the app in", default="default")
        opts.add(
            "api",
            str,
            "volcano (a Volcano Job, gang scheduled) or batch (batch/v1 "
            "Indexed Jobs and a headless Service, when Volcano is absent)",
            default="volcano",
        )
        opts.add("queue", str, "Volcano queue (api=volcano only)", default="default")
        opts.add("service_account", str, "service account the pods run as")
        opts.add("priority_class", str, "priority class name of the pods")
        opts.add("image_pull_secrets", list, "names of secrets used to pull the images")
        opts.add("node_selector", dict, "node labels the pods must run on (k1:v1;k2:v2)")
        opts.add("labels", dict, "extra labels put on every object and pod")
        opts.add("shm_size", str, "size limit of /dev/shm (an in-memory emptyDir), e.g. 8Gi")
        return opts

    def _submit_dryrun(
        self, app: AppDef, cfg: dict[str, CfgVal]
    ) -> AppDryRunInfo[KubernetesRequest]:
        _check_app(app, cfg)
        app_id = make_unique(to_dns_label(app.name, 40))
        return AppDryRunInfo(build_request(app, app_id, cfg), _format)

    def with_workspace(
        self, app: AppDef, cfg: Mapping[str, CfgVal], workspace: str
    ) -> tuple[AppDef, dict[str, CfgVal]]:
        """Build each role image + ``workspace`` with the local Docker engine (pushed at
        submit to ``image_repo``, where the cluster pulls it)."""
        if not cfg.get("image_repo"):
            raise SpecsError(
                "run option 'image_repo'",
                cfg.get("image_repo"),
                "a cluster pulls the workspace image from a repository; name one to push it "
                "to (-cfg image_repo=REGISTRY/REPO)",
            )
        for role in app.roles:
            check_image(f"role {role.name!r} image", role.image)
        return super().with_workspace(app, cfg, workspace)

    def schedule(self, dryrun_info: AppDryRunInfo[KubernetesRequest]) -> str:
        req = dryrun_info.request
        # Before any object exists: a failed push leaves nothing in the cluster.
        # Each target is REPO:TAG as the dryrun made it (image_repo carries no tag).
        self.push_images({src: _repo_and_tag(dst) for src, dst in req.push.items()})
        created: list[dict[str, Any]] = []
        try:
            for manifest in req.manifests:
                self._create(req.namespace, manifest)
                created.append(manifest)
        except Exception:
            # Leave nothing half-created behind a refused submission.
            for manifest in reversed(created):
                self._delete(req.namespace, manifest)
            raise
        return f"{req.namespace}:{req.app_id}"

    def _create(self, namespace: str, manifest: dict[str, Any]) -> None:
        apis = self._apis()
        client = self._client()
        kind = manifest["kind"]
        if kind == "Job" and manifest["apiVersion"].startswith(VOLCANO_GROUP):
            apis.CustomObjectsApi(client).create_namespaced_custom_object(
                VOLCANO_GROUP, VOLCANO_VERSION, namespace, VOLCANO_PLURAL, manifest
            )
        elif kind == "Job":
            apis.BatchV1Api(client).create_namespaced_job(namespace, manifest)
        elif kind == "Service":
            apis.CoreV1Api(client).create_namespaced_service(namespace, manifest)
        else:
            raise TypeError(f"cannot create a {kind}")

    def _delete(self, namespace: str, manifest: dict[str, Any]) -> None:
        apis = self._apis()
        client = self._client()
        name = manifest["metadata"]["name"]
        try:
            if manifest["kind"] == "Job" and manifest["apiVersion"].startswith(VOLCANO_GROUP):
                apis.CustomObjectsApi(client).delete_namespaced_custom_object(
                    VOLCANO_GROUP, VOLCANO_VERSION, namespace, VOLCANO_PLURAL, name
                )
            elif manifest["kind"] == "Job":
                apis.BatchV1Api(client).delete_namespaced_job(
                    name, namespace, propagation_policy="Background"
                )
            else:
                apis.CoreV1Api(client).delete_namespaced_service(name, namespace)
        except apis.ApiException as e:
            if e.status != 404:
                raise

    # -- inspection -------------------------------------------------------------------

    @staticmethod
    def _split(app_id: str) -> tuple[str, str]:
        namespace, sep, name = app_id.partition(":")
        if not sep or not namespace or not name:
            raise SpecsError("app id", app_id, "expected NAMESPACE:NAME as printed by run")
        return namespace, name

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        namespace, name = self._split(app_id)
        apis = self._apis()
        client = self._client()
        try:
            vjob = apis.CustomObjectsApi(client).get_namespaced_custom_object(
                VOLCANO_GROUP, VOLCANO_VERSION, namespace, VOLCANO_PLURAL, name
            )
        except apis.ApiException as e:
            if e.status != 404:
                raise
            vjob = None
        if vjob is not None:
            pods = self._pods(namespace, name)
            return _why_pending(_describe_volcano(app_id, vjob, pods), pods)
        jobs = (
            apis.BatchV1Api(client)
            .list_namespaced_job(namespace, label_selector=f"{LABEL_APP_ID}={name}")
            .items
        )
        if not jobs:
            return None
        pods = self._pods(namespace, name)
        desc = _describe_batch(app_id, [client.sanitize_for_serialization(j) for j in jobs], pods)
        return _why_pending(desc, pods)

    def _pods(self, namespace: str, name: str) -> list[dict[str, Any]]:
        client = self._client()
        pods = (
            self._apis()
            .CoreV1Api(client)
            .list_namespaced_pod(namespace, label_selector=f"{LABEL_APP_ID}={name}")
            .items
        )
        return [client.sanitize_for_serialization(p) for p in pods]

    def list(self) -> list[ListAppResponse]:
        apis = self._apis()
        client = self._client()
        selector = f"{LABEL_MANAGED}=torchx"
        out: list[ListAppResponse] = []
        try:
            vjobs = apis.CustomObjectsApi(client).list_cluster_custom_object(
                VOLCANO_GROUP, VOLCANO_VERSION, VOLCANO_PLURAL, label_selector=selector
            )["items"]
        except apis.ApiException as e:
            if e.status != 404:  # no Volcano CRD installed
                raise
            vjobs = []
        for v in vjobs:
            meta = v["metadata"]
            desc = _describe_volcano(f"{meta['namespace']}:{meta['name']}", v)
            out.append(
                ListAppResponse(
                    desc.app_id,
                    desc.state,
                    meta.get("labels", {}).get(LABEL_APP_NAME, ""),
                    _parse_time(meta.get("creationTimestamp")),
                )
            )
        jobs = apis.BatchV1Api(client).list_job_for_all_namespaces(label_selector=selector).items
        by_app: dict[str, list[dict[str, Any]]] = {}
        for j in jobs:
            d = client.sanitize_for_serialization(j)
            key = f"{d['metadata']['namespace']}:{d['metadata']['labels'][LABEL_APP_ID]}"
            by_app.setdefault(key, []).append(d)
        for key, group in sorted(by_app.items()):
            desc = _describe_batch(key, group)
            meta = group[0]["metadata"]
            out.append(
                ListAppResponse(
                    key,
                    desc.state,
                    meta["labels"].get(LABEL_APP_NAME, ""),
                    _parse_time(meta.get("creationTimestamp")),
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
        if streams not in (None, Stream.COMBINED):
            raise SpecsError(
                "streams", streams, "Kubernetes keeps one combined log per pod; leave streams out"
            )
        namespace, name = self._split(app_id)
        apis = self._apis()
        core = apis.CoreV1Api(self._client())
        selector = f"{LABEL_APP_ID}={name},{LABEL_ROLE}={to_dns_label(role_name, 63)}"
        pods = core.list_namespaced_pod(namespace, label_selector=selector).items
        wanted = f"{name}-{to_dns_label(role_name, 20)}-{k}"
        pod = next(
            (p for p in pods if p.spec.hostname == wanted or p.metadata.name == wanted), None
        )
        if pod is None:
            raise SpecsError("replica", k, f"no pod {wanted} in {namespace}; is the app running?")
        kwargs: dict[str, Any] = {"timestamps": True}
        if since is not None:
            age = datetime.now(timezone.utc) - since.astimezone(timezone.utc)
            kwargs["since_seconds"] = max(int(age.total_seconds()), 1)
        if should_tail:
            resp = core.read_namespaced_pod_log(
                pod.metadata.name, namespace, follow=True, _preload_content=False, **kwargs
            )
            lines: Iterable[str] = (
                (ln.decode("utf-8", "replace") + "\n" for ln in resp.stream_lines())
                if hasattr(resp, "stream_lines")
                else _iter_raw(resp)
            )
        else:
            text = core.read_namespaced_pod_log(pod.metadata.name, namespace, **kwargs)
            lines = (ln + "\n" for ln in text.splitlines())
        return filter_regex(regex, _untimestamp(lines, until))

    def _cancel_existing(self, app_id: str) -> None:
        namespace, name = self._split(app_id)
        apis = self._apis()
        client = self._client()
        note = {"metadata": {"annotations": {CANCELLED_ANNOTATION: "true"}}}
        try:
            apis.CustomObjectsApi(client).get_namespaced_custom_object(
                VOLCANO_GROUP, VOLCANO_VERSION, namespace, VOLCANO_PLURAL, name
            )
        except apis.ApiException as e:
            if e.status != 404:
                raise
        else:
            command = {
                "apiVersion": "bus.volcano.sh/v1alpha1",
                "kind": "Command",
                "metadata": {"generateName": f"{name}-abort-", "namespace": namespace},
                "action": "AbortJob",
                "target": {
                    "apiVersion": f"{VOLCANO_GROUP}/{VOLCANO_VERSION}",
                    "kind": "Job",
                    "name": name,
                },
            }
            apis.CustomObjectsApi(client).create_namespaced_custom_object(
                "bus.volcano.sh", "v1alpha1", namespace, "commands", command
            )
            return
        batch = apis.BatchV1Api(client)
        for job in batch.list_namespaced_job(
            namespace, label_selector=f"{LABEL_APP_ID}={name}"
        ).items:
            # Suspending stops the pods and keeps the Job, so describe can say CANCELLED.
            batch.patch_namespaced_job(
                job.metadata.name, namespace, {**note, "spec": {"suspend": True}}
            )


def _iter_raw(resp: Any) -> Iterator[str]:
    pending = b""
    for chunk in resp.stream(1024):
        pending += chunk
        *done, pending = pending.split(b"\n")
        for line in done:
            yield line.decode("utf-8", "replace") + "\n"
    if pending:
        yield pending.decode("utf-8", "replace")


def _untimestamp(lines: Iterable[str], until: datetime | None) -> Iterator[str]:
    for line in lines:
        stamp, _, rest = line.partition(" ")
        if until is not None:
            t = _parse_time(stamp)
            if t is not None and t > until.astimezone(timezone.utc):
                return
        yield rest


def _parse_time(text: str | None) -> datetime | None:
    """An RFC 3339 time as Kubernetes writes it (``Z``, up to nanoseconds), in UTC."""
    if not text:
        return None
    head, _, frac = text.rstrip("Z").partition(".")
    try:
        t = datetime.fromisoformat(head).replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return t.replace(microsecond=int((frac[:6] or "0").ljust(6, "0"))) if frac.isdigit() else t


_VOLCANO_STATES = {
    "Pending": AppState.PENDING,
    "Inqueue": AppState.SUBMITTED,
    "Running": AppState.RUNNING,
    "Restarting": AppState.RUNNING,
    "Completing": AppState.RUNNING,
    "Completed": AppState.SUCCEEDED,
    "Terminating": AppState.FAILED,
    "Terminated": AppState.FAILED,
    "Failed": AppState.FAILED,
    "Aborting": AppState.CANCELLED,
    "Aborted": AppState.CANCELLED,
}


_POD_PHASES = {
    "Pending": AppState.PENDING,
    "Running": AppState.RUNNING,
    "Succeeded": AppState.SUCCEEDED,
    "Failed": AppState.FAILED,
    "Unknown": AppState.UNKNOWN,
}
# Where each controller records a pod's replica index (Volcano also ends the pod's name in it).
_INDEX_KEYS = ("volcano.sh/task-index", "batch.kubernetes.io/job-completion-index")


def _pod_index(pod: Mapping[str, Any]) -> int | None:
    meta = pod.get("metadata") or {}
    for source in (meta.get("annotations") or {}, meta.get("labels") or {}):
        for key in _INDEX_KEYS:
            if str(source.get(key, "")).isdigit():
                return int(source[key])
    tail = str(meta.get("name", "")).rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _apply_pods(roles: list[RoleStatus], pods: Iterable[Mapping[str, Any]]) -> None:
    """Per-replica state, hostname and exit code from each replica's newest pod."""
    newest: dict[tuple[str, int], Mapping[str, Any]] = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        role = (meta.get("labels") or {}).get(LABEL_ROLE)
        index = _pod_index(pod)
        if role is None or index is None:
            continue
        seen = newest.get((role, index))
        # A retried replica leaves its failed pods behind: the latest one speaks for it.
        if seen is None or str(meta.get("creationTimestamp") or "") >= str(
            seen["metadata"].get("creationTimestamp") or ""
        ):
            newest[(role, index)] = pod
    for rs in roles:
        for replica in rs.replicas:
            found = newest.get((rs.role, replica.id))
            if found is None:
                continue
            pod = found
            status = pod.get("status") or {}
            replica.state = _POD_PHASES.get(status.get("phase", ""), AppState.UNKNOWN)
            replica.hostname = (pod.get("spec") or {}).get("hostname") or pod["metadata"]["name"]
            for cs in status.get("containerStatuses") or []:
                ended = (cs.get("state") or {}).get("terminated")
                if ended is not None:
                    replica.exit_code = int(ended.get("exitCode", 0))


def _why_pending(
    desc: DescribeAppResponse, pods: Iterable[Mapping[str, Any]]
) -> DescribeAppResponse:
    """A pending app's ``msg``: the scheduler's own words from each pod it could not place
    (the ``PodScheduled=False`` condition, reason ``Unschedulable``)."""
    if desc.state != AppState.PENDING:
        return desc
    said: list[str] = []
    for pod in pods:
        for cond in (pod.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                text = f"{cond.get('reason') or 'not scheduled'}: {cond.get('message') or ''}"
                text = text.strip().rstrip(":")
                if text not in said:
                    said.append(text)
    if said:
        desc.msg = "waiting for Kubernetes to schedule it: " + "; ".join(said)
    return desc


def _describe_volcano(
    app_id: str, vjob: Mapping[str, Any], pods: Iterable[Mapping[str, Any]] = ()
) -> DescribeAppResponse:
    status = vjob.get("status") or {}
    phase = (status.get("state") or {}).get("phase", "")
    roles = []
    for task in vjob.get("spec", {}).get("tasks", []):
        role = task["template"]["metadata"]["labels"].get(LABEL_ROLE, task["name"])
        roles.append(
            RoleStatus(
                role,
                [
                    ReplicaStatus(id=i, state=AppState.UNKNOWN, role=role)
                    for i in range(int(task.get("replicas", 1)))
                ],
            )
        )
    _apply_pods(roles, pods)
    return DescribeAppResponse(
        app_id=app_id,
        state=_VOLCANO_STATES.get(phase, AppState.UNKNOWN),
        num_restarts=int(status.get("retryCount", 0)),
        msg=(status.get("state") or {}).get("message", ""),
        roles_statuses=roles,
    )


def _describe_batch(
    app_id: str, jobs: list[dict[str, Any]], pods: Iterable[Mapping[str, Any]] = ()
) -> DescribeAppResponse:
    states = []
    roles = []
    restarts = 0
    for job in jobs:
        meta, spec, status = job["metadata"], job.get("spec", {}), job.get("status") or {}
        conds = {c["type"]: c["status"] for c in status.get("conditions") or []}
        if meta.get("annotations", {}).get(CANCELLED_ANNOTATION) == "true":
            state = AppState.CANCELLED
        elif conds.get("Failed") == "True":
            state = AppState.FAILED
        elif conds.get("Complete") == "True":
            state = AppState.SUCCEEDED
        elif status.get("active"):
            state = AppState.RUNNING
        else:
            state = AppState.PENDING
        states.append(state)
        restarts += int(status.get("failed") or 0)
        role = meta["labels"].get(LABEL_ROLE, meta["name"])
        roles.append(
            RoleStatus(
                role,
                [
                    ReplicaStatus(id=i, state=state, role=role)
                    for i in range(int(spec.get("completions") or 1))
                ],
            )
        )
    _apply_pods(roles, pods)
    overall: AppState = AppState.SUCCEEDED
    for s in (AppState.CANCELLED, AppState.FAILED, AppState.RUNNING, AppState.PENDING):
        if s in states:
            overall = s
            break
    return DescribeAppResponse(
        app_id=app_id, state=overall, num_restarts=restarts, roles_statuses=roles
    )


def _pod_template(
    app: AppDef,
    app_id: str,
    role: Role,
    cfg: Mapping[str, CfgVal],
    replica_var: str,
    rank0_host: str,
    labels: dict[str, str],
) -> dict[str, Any]:
    # Kubernetes expands $(VAR) from the pod's own env; a lone pod is replica 0.
    replica_id = f"$({replica_var})" if replica_var else "0"
    filled = macros.Values(
        img_root="", app_id=app_id, replica_id=replica_id, rank0_env=TORCHX_RANK0_HOST
    ).apply(role)
    env = replica_env(
        filled.env,
        app_id=app_id,
        role_name=role.name,
        replica_id=replica_id,
        rank0_host=rank0_host,
        defaults={
            "PYTHONUNBUFFERED": "1",
            "MASTER_ADDR": rank0_host,
            "MASTER_PORT": str(MASTER_PORT),
            "RANK": replica_id,
            "WORLD_SIZE": str(role.num_replicas),
            "GROUP_RANK": replica_id,
            "ROLE_RANK": replica_id,
            "ROLE_WORLD_SIZE": str(role.num_replicas),
            "LOCAL_RANK": "0",
            "LOCAL_WORLD_SIZE": "1",
        },
    )
    volumes, mounts = _volumes(role, cfg.get("shm_size"))  # type: ignore[arg-type]
    container: dict[str, Any] = {
        "name": to_dns_label(role.name, 63),
        "image": role.image,
        "command": [filled.entrypoint],
        "args": list(filled.args),
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "volumeMounts": mounts,
    }
    resources = _container_resources(role)
    if resources:
        container["resources"] = resources
    if role.port_map:
        container["ports"] = [
            {"name": to_dns_label(n, 15), "containerPort": p}
            for n, p in sorted(role.port_map.items())
        ]
    if any(isinstance(m, DeviceMount) for m in role.mounts):
        # Device nodes from hostPath are only usable by a privileged container.
        container["securityContext"] = {"privileged": True}
    spec: dict[str, Any] = {
        "containers": [container],
        "volumes": volumes,
        "restartPolicy": "Never",
    }
    if cfg.get("service_account"):
        spec["serviceAccountName"] = cfg["service_account"]
    if cfg.get("priority_class"):
        spec["priorityClassName"] = cfg["priority_class"]
    if cfg.get("image_pull_secrets"):
        spec["imagePullSecrets"] = [{"name": s} for s in cfg["image_pull_secrets"]]  # type: ignore[union-attr]
    if cfg.get("node_selector"):
        spec["nodeSelector"] = dict(cfg["node_selector"])  # type: ignore[arg-type]
    return {"metadata": {"labels": labels}, "spec": spec}


def build_request(app: AppDef, app_id: str, cfg: Mapping[str, CfgVal]) -> KubernetesRequest:
    """The manifests for ``app`` under ``app_id`` (no checks, no randomness)."""
    namespace = str(cfg.get("namespace") or "default")
    api = str(cfg.get("api") or "volcano")
    check_label_value("app name", to_dns_label(app.name, 63))
    base = {
        LABEL_MANAGED: "torchx",
        LABEL_APP_ID: app_id,
        LABEL_APP_NAME: to_dns_label(app.name, 63),
        **dict(cfg.get("labels") or {}),  # type: ignore[arg-type]
    }
    for key in base:
        check_label_key("label", key)
    rank0_host = f"{app_id}-{to_dns_label(app.roles[0].name, 20)}-0.{app_id}"
    repo = cfg.get("image_repo")
    push: dict[str, str] = {}
    if repo:
        roles = []
        for role in app.roles:
            if role.image.startswith(WORKSPACE_REPO + ":"):
                push[role.image] = f"{repo}:{role.image.partition(':')[2]}"
                role = dataclasses.replace(role, image=push[role.image])
            roles.append(role)
        app = dataclasses.replace(app, roles=roles)
    if api == "volcano":
        tasks = []
        for role in app.roles:
            task = to_dns_label(role.name, 20)
            labels = {**base, LABEL_ROLE: to_dns_label(role.name, 63)}
            template = _pod_template(app, app_id, role, cfg, "VC_TASK_INDEX", rank0_host, labels)
            entry: dict[str, Any] = {
                "name": task,
                "replicas": role.num_replicas,
                "minAvailable": role.min_replicas or role.num_replicas,
                "template": template,
            }
            if role.max_retries > 0:
                entry["maxRetry"] = role.max_retries
                action = _VOLCANO_ACTIONS[RetryPolicy(role.retry_policy)]
                entry["policies"] = [
                    {"event": "PodEvicted", "action": action},
                    {"event": "PodFailed", "action": action},
                ]
            tasks.append(entry)
        job = {
            "apiVersion": f"{VOLCANO_GROUP}/{VOLCANO_VERSION}",
            "kind": "Job",
            "metadata": {"name": app_id, "namespace": namespace, "labels": dict(base)},
            "spec": {
                "schedulerName": "volcano",
                "queue": str(cfg.get("queue") or "default"),
                "minAvailable": sum(r.min_replicas or r.num_replicas for r in app.roles),
                "maxRetry": max(r.max_retries for r in app.roles),
                "plugins": {"svc": [], "env": []},
                "tasks": tasks,
            },
        }
        return KubernetesRequest(app_id, namespace, api, [job], push)
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": app_id, "namespace": namespace, "labels": dict(base)},
        "spec": {
            "clusterIP": "None",
            "selector": {LABEL_APP_ID: app_id},
            # Replicas must resolve each other before they are Ready, to rendezvous.
            "publishNotReadyAddresses": True,
        },
    }
    manifests: list[dict[str, Any]] = [service]
    for role in app.roles:
        labels = {**base, LABEL_ROLE: to_dns_label(role.name, 63)}
        template = _pod_template(app, app_id, role, cfg, "JOB_COMPLETION_INDEX", rank0_host, labels)
        template["spec"]["subdomain"] = app_id
        if role.max_retries > 0 and RetryPolicy(role.retry_policy) == RetryPolicy.REPLICA:
            template["spec"]["restartPolicy"] = "OnFailure"
        manifests.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": f"{app_id}-{to_dns_label(role.name, 20)}",
                    "namespace": namespace,
                    "labels": dict(labels),
                },
                "spec": {
                    "completionMode": "Indexed",
                    "completions": role.num_replicas,
                    "parallelism": role.num_replicas,
                    "backoffLimit": role.max_retries,
                    "template": template,
                },
            }
        )
    return KubernetesRequest(app_id, namespace, api, manifests, push)


def create_scheduler(session_name: str, client: Any = None, **params: Any) -> KubernetesScheduler:
    """The kubernetes factory; ``client`` (a ``kubernetes.client.ApiClient``) is its only
    parameter."""
    check_params(BACKEND, params, ("client",))
    return KubernetesScheduler(session_name, client=client)


def app_to_resource(
    app: AppDef, cfg: Mapping[str, CfgVal] | None = None, app_id: str | None = None
) -> dict[str, Any]:
    """The object that runs ``app``: a Volcano Job (``api=volcano``, the default), or for
    ``api=batch`` a List of the headless Service and one batch/v1 Job per role."""
    resolved = dict(cfg or {})
    req = build_request(app, app_id or make_unique(to_dns_label(app.name, 40)), resolved)
    if len(req.manifests) == 1:
        return req.manifests[0]
    return {"apiVersion": "v1", "kind": "List", "items": req.manifests}


def role_to_pod(
    name: str, role: Role, app_id: str = "", cfg: Mapping[str, CfgVal] | None = None
) -> dict[str, Any]:
    """A Pod manifest running one replica (replica 0) of ``role``, as ``app_to_resource``
    templates it."""
    app_id = app_id or name
    app = AppDef(name=name, roles=[role])
    labels = {LABEL_MANAGED: "torchx", LABEL_APP_ID: app_id, LABEL_ROLE: to_dns_label(role.name)}
    rank0_host = f"{app_id}-{to_dns_label(role.name, 20)}-0.{app_id}"
    template = _pod_template(app, app_id, role, dict(cfg or {}), "", rank0_host, labels)
    template["metadata"]["name"] = to_dns_label(name, 63)
    return {"apiVersion": "v1", "kind": "Pod", **template}


class KubernetesOpts(TypedDict, total=False):
    """The kubernetes run options, typed."""

    namespace: str
    api: str
    queue: str
    service_account: str
    priority_class: str
    image_pull_secrets: list[str]
    node_selector: dict[str, str]
    labels: dict[str, str]
    shm_size: str
    image_repo: str
    quiet: bool


def _repo_and_tag(pushed: str) -> tuple[str, str]:
    repo, _, tag = pushed.rpartition(":")
    return repo, tag
