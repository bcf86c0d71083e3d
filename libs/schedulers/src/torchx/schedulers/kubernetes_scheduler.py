"""kubernetes: runs an app as a Volcano Job, or as batch/v1 Jobs behind a headless Service.

The manifests are plain dicts (what ``kubectl apply`` would read); dryrun prints them as
YAML and ``schedule`` submits them unchanged through the kubernetes Python client, which is
imported only when the API is called.

Where replicas find each other:

- Volcano (``-cfg api=volcano``, the default): one task per role; Volcano's ``svc`` plugin
  names pod ``k`` of task ``role`` ``<app_id>-<role>-<k>`` in the DNS subdomain ``<app_id>``,
  and its ``env`` plugin sets ``VC_TASK_INDEX`` (the replica id).
- batch (``-cfg api=batch``): one batch/v1 Job ``<app_id>-<role>-<k>`` per replica plus a
  headless Service ``<app_id>``; the pod of replica ``k`` has the hostname
  ``<app_id>-<role>-<k>`` and its replica id written into its command line. One Job per
  replica (rather than one Indexed Job per role) works on every Kubernetes release: Indexed
  Jobs need 1.21+, and older API servers silently drop ``completionMode``.

Either way replica 0 of the first role is ``<app_id>-<role0>-0.<app_id>``, exported as
``TORCHX_RANK0_HOST`` (and ``MASTER_ADDR``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
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
from torchx.schedulers._errors import SchedulerError, check_params, require
from torchx.schedulers._replica_env import TORCHX_RANK0_HOST, replica_env
from torchx.schedulers.ids import DEFAULT_SUFFIX_LENGTH, make_unique
from torchx.specs import (
    MISSING,
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
LABEL_REPLICA = f"{LABEL_PREFIX}/replica-id"
LABEL_MANAGED = "app.kubernetes.io/managed-by"
CANCELLED_ANNOTATION = f"{LABEL_PREFIX}/cancelled"

VOLCANO_GROUP = "batch.volcano.sh"
VOLCANO_VERSION = "v1alpha1"
VOLCANO_PLURAL = "jobs"
APIS = ("volcano", "batch")
# Name budgets: pod hostnames "<app_id>-<role>-<k>" and Job names must fit a 63-char DNS label.
APP_NAME_CHARS = 24
ROLE_NAME_CHARS = 20
DNS_LABEL_MAX = 63
TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# Volcano lifecycle actions per retry policy: what is restarted when a pod fails.
_VOLCANO_ACTIONS = {
    RetryPolicy.APPLICATION: "RestartJob",
    RetryPolicy.ROLE: "RestartTask",
    RetryPolicy.REPLICA: "RestartPod",
}


class KubernetesApiError(SchedulerError):
    """The API server refused a request; one line with the server's reason and what to do.

    ``status`` is the HTTP status of the refusal (None when no server was reached).
    """

    def __init__(self, message: str, fix: str = "", status: int | None = None) -> None:
        super().__init__(BACKEND, message, fix)
        self.status = status

    @classmethod
    def from_api(cls, e: Any, action: str, namespace: str | None) -> KubernetesApiError:
        """From a client ``ApiException``: what was attempted, where, and the server's words."""
        import json

        try:
            reason = str(json.loads(e.body or "{}").get("message") or "")
        except (ValueError, AttributeError):
            reason = ""  # not a Status object: fall back to the HTTP reason
        reason = " ".join((reason or str(e.reason or "") or f"HTTP {e.status}").split())
        where = f" in namespace {namespace!r}" if namespace else ""
        fix = ""
        if e.status == 401:
            fix = "check the credentials in your kubeconfig"
        elif e.status == 403 and "cannot" in reason:  # RBAC, not an admission plugin
            fix = "ask a cluster admin for this permission (a Role bound to your account)"
        elif e.status == 404 and namespace and "namespaces" in reason and namespace in reason:
            fix = "create the namespace or pick another with -cfg namespace=NAME"
        return cls(f"could not {action}{where}: {reason}", fix, e.status)


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
    pushes = "".join(f"# push: {src} -> {dst}\n" for src, dst in sorted(req.push.items()))
    try:
        import yaml
    except ImportError:
        # A dryrun needs no cluster, so it should not need the kubernetes extra (which brings
        # PyYAML) either: JSON is valid YAML and kubectl reads it the same way.
        return pushes + "\n---\n".join(json.dumps(m, indent=2) for m in req.manifests) + "\n"
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


def _mount(name: str, path: str, read_only: bool) -> dict[str, Any]:
    # readOnly only when set: the server stores false as absent, and so do we.
    return {"name": name, "mountPath": path, **({"readOnly": True} if read_only else {})}


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
            mounts.append(_mount(name, m.dst_path, m.read_only))
        elif isinstance(m, VolumeMount):
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": m.src}})
            mounts.append(_mount(name, m.dst_path, m.read_only))
        elif isinstance(m, DeviceMount):
            volumes.append({"name": name, "hostPath": {"path": m.src_path, "type": "CharDevice"}})
            mounts.append(_mount(name, m.dst_path, "w" not in m.permissions))
    return volumes, mounts


def parse_toleration(text: str) -> dict[str, str]:
    """``KEY[=VALUE][:EFFECT]`` (the form ``kubectl taint`` prints) as a pod toleration.

    Without a value the toleration matches any value of the taint (``Exists``); without an
    effect it matches every effect.
    """
    where = "run option 'tolerations'"
    head, sep, effect = text.partition(":")
    key, eq, value = head.partition("=")
    if not key:
        raise SpecsError(
            where, text, "each entry is KEY[=VALUE][:EFFECT], e.g. gpu=true:NoSchedule"
        )
    check_label_key(where, key)
    tol = {"key": key, "operator": "Equal" if eq else "Exists"}
    if eq:
        check_label_value(where, value)
        tol["value"] = value
    if sep:
        if effect not in TOLERATION_EFFECTS:
            raise SpecsError(
                where, text, f"the effect after ':' is one of {', '.join(TOLERATION_EFFECTS)}"
            )
        tol["effect"] = effect
    return tol


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
        if not role.entrypoint or role.entrypoint == MISSING:
            raise SpecsError(f"{where} entrypoint", role.entrypoint, "give the program to run")
        if not isinstance(role.num_replicas, int) or role.num_replicas < 1:
            raise SpecsError(f"{where} num_replicas", role.num_replicas, "a whole number >= 1")
        task = to_dns_label(role.name, ROLE_NAME_CHARS)
        if task in seen:
            raise SpecsError(
                f"{where} name",
                role.name,
                f"two roles map to the same task name {task!r}; "
                "rename one (lowercase letters, digits and '-')",
            )
        seen.add(task)
        # The longest pod hostname this role gets, with the longest app id _submit_dryrun makes.
        app_id = "x" * (APP_NAME_CHARS + 1 + DEFAULT_SUFFIX_LENGTH)
        longest = len(f"{app_id}-{task}-{role.num_replicas - 1}")
        if longest > DNS_LABEL_MAX:
            raise SpecsError(
                f"{where} num_replicas",
                role.num_replicas,
                f"pod hostnames <app>-{task}-<replica> would exceed {DNS_LABEL_MAX} characters; "
                "use fewer replicas or a shorter role name",
            )
        for m in role.mounts:
            if isinstance(m, VolumeMount):
                check_label_value(f"{where} mount src (a PVC name)", m.src)
    check_labels("run option 'labels'", dict(cfg.get("labels") or {}))  # type: ignore[arg-type]
    check_labels("run option 'node_selector'", dict(cfg.get("node_selector") or {}))  # type: ignore[arg-type]
    for entry in cfg.get("tolerations") or []:  # type: ignore[union-attr]
        parse_toleration(str(entry))
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
            k8s: Any = require("kubernetes", scheduler=BACKEND, extra=EXTRA)
            config = k8s.config
            # In a pod: its service account. Elsewhere: KUBECONFIG or ~/.kube/config. The
            # client library's process-wide default configuration is left alone.
            try:
                conf = k8s.client.Configuration()
                config.load_incluster_config(client_configuration=conf)
                self._api_client = k8s.client.ApiClient(conf)
            except config.ConfigException:
                # Read KUBECONFIG now: the library's default is the one at its import.
                path = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
                try:
                    self._api_client = config.new_client_from_config(config_file=path)
                except (config.ConfigException, OSError) as e:
                    raise KubernetesApiError(
                        f"no cluster to talk to ({e})",
                        "set KUBECONFIG to a kubeconfig file or run inside a pod",
                    ) from None
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
        opts.add(
            "tolerations",
            list,
            "taints the pods tolerate, each KEY[=VALUE][:EFFECT] (e.g. "
            "nvidia.com/gpu:NoSchedule;dedicated=ml:NoExecute)",
        )
        opts.add("labels", dict, "extra labels put on every object and pod")
        opts.add("shm_size", str, "size limit of /dev/shm (an in-memory emptyDir), e.g. 8Gi")
        return opts

    def _submit_dryrun(
        self, app: AppDef, cfg: dict[str, CfgVal]
    ) -> AppDryRunInfo[KubernetesRequest]:
        _check_app(app, cfg)
        app_id = make_unique(to_dns_label(app.name, APP_NAME_CHARS))
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
        except BaseException:
            # Leave nothing half-created behind a refused submission.
            for manifest in reversed(created):
                self._delete(req.namespace, manifest)
            raise
        return f"{req.namespace}:{req.app_id}"

    def _create(self, namespace: str, manifest: dict[str, Any], dry_run: bool = False) -> Any:
        """Create one manifest; ``dry_run`` has the server validate and admit it, not store it.

        Returns the object as the server would store it.
        """
        apis = self._apis()
        client = self._client()
        kind = manifest["kind"]
        extra = {"dry_run": "All"} if dry_run else {}
        try:
            if kind == "Job" and manifest["apiVersion"].startswith(VOLCANO_GROUP):
                return apis.CustomObjectsApi(client).create_namespaced_custom_object(
                    VOLCANO_GROUP, VOLCANO_VERSION, namespace, VOLCANO_PLURAL, manifest, **extra
                )
            if kind == "Job":
                made = apis.BatchV1Api(client).create_namespaced_job(namespace, manifest, **extra)
            elif kind == "Service":
                made = apis.CoreV1Api(client).create_namespaced_service(
                    namespace, manifest, **extra
                )
            else:
                raise TypeError(f"cannot create a {kind}")
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(
                e, f"create {kind} {manifest['metadata']['name']!r}", namespace
            ) from None
        return client.sanitize_for_serialization(made)

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
                raise KubernetesApiError.from_api(
                    e, f"delete {manifest['kind']} {name!r}", namespace
                ) from None

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
            # 404: no such Volcano Job, or no Volcano installed (then it is a batch app).
            if e.status != 404:
                raise KubernetesApiError.from_api(e, f"read app {name!r}", namespace) from None
            vjob = None
        if vjob is not None:
            pods = self._pods(namespace, name)
            return _why_pending(_describe_volcano(app_id, vjob, pods), pods)
        jobs = self._app_objects(
            "Jobs", apis.BatchV1Api(client).list_namespaced_job, namespace, name
        )
        if not jobs:
            return None
        pods = self._pods(namespace, name)
        return _why_pending(_describe_batch(app_id, jobs, pods), pods)

    def _pods(self, namespace: str, name: str) -> list[dict[str, Any]]:
        apis = self._apis()
        return self._app_objects(
            "pods", apis.CoreV1Api(self._client()).list_namespaced_pod, namespace, name
        )

    def _app_objects(
        self, kind: str, list_call: Callable[..., Any], namespace: str, name: str
    ) -> list[dict[str, Any]]:
        """The objects of one kind labelled as app ``name``, as plain dicts."""
        apis = self._apis()
        try:
            items = list_call(namespace, label_selector=f"{LABEL_APP_ID}={name}").items
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(
                e, f"list the {kind} of app {name!r}", namespace
            ) from None
        client = self._client()
        return [client.sanitize_for_serialization(item) for item in items]

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
            if e.status != 404:  # 404: no Volcano CRD installed
                raise KubernetesApiError.from_api(e, "list Volcano Jobs", None) from None
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
        try:
            jobs = (
                apis.BatchV1Api(client).list_job_for_all_namespaces(label_selector=selector).items
            )
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(e, "list Jobs", None) from None
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
        wanted = f"{name}-{to_dns_label(role_name, ROLE_NAME_CHARS)}-{k}"
        pods = [
            p
            for p in self._pods(namespace, name)
            if p["metadata"]["labels"].get(LABEL_ROLE) == to_dns_label(role_name, 63)
            and wanted in (p["spec"].get("hostname"), p["metadata"]["name"])
        ]
        if not pods:
            raise SpecsError("replica", k, f"no pod {wanted} in {namespace}; is the app running?")
        # A retried replica leaves its earlier pods behind: read the newest one.
        pod = max(pods, key=lambda p: str(p["metadata"].get("creationTimestamp") or ""))
        pod_name = pod["metadata"]["name"]
        apis = self._apis()
        core = apis.CoreV1Api(self._client())
        kwargs: dict[str, Any] = {"timestamps": True}
        if since is not None:
            age = datetime.now(timezone.utc) - since.astimezone(timezone.utc)
            kwargs["since_seconds"] = max(int(age.total_seconds()), 1)
        try:
            if should_tail:
                resp = core.read_namespaced_pod_log(
                    pod_name, namespace, follow=True, _preload_content=False, **kwargs
                )
                lines: Iterable[str] = (
                    (ln.decode("utf-8", "replace") + "\n" for ln in resp.stream_lines())
                    if hasattr(resp, "stream_lines")
                    else _iter_raw(resp)
                )
            else:
                text = core.read_namespaced_pod_log(pod_name, namespace, **kwargs)
                lines = (ln + "\n" for ln in text.splitlines())
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(
                e, f"read the log of pod {pod_name!r}", namespace
            ) from None
        return filter_regex(regex, _untimestamp(lines, until))

    def cancel(self, app_id: str) -> None:
        """Delete every object the app created; a no-op for an app the cluster does not know.

        Unlike other schedulers this also acts on an app that has ended: its Jobs, Service
        and pods would otherwise stay in the namespace until someone deletes them.
        """
        if self.describe(app_id) is not None:
            self._cancel_existing(app_id)

    def _cancel_existing(self, app_id: str) -> None:
        """Delete the app's Volcano Job, or its Jobs, Service and pods."""
        namespace, name = self._split(app_id)
        apis = self._apis()
        client = self._client()
        selector = f"{LABEL_APP_ID}={name}"
        try:
            apis.CustomObjectsApi(client).delete_namespaced_custom_object(
                VOLCANO_GROUP,
                VOLCANO_VERSION,
                namespace,
                VOLCANO_PLURAL,
                name,
                propagation_policy="Background",
            )
        except apis.ApiException as e:
            if e.status != 404:  # 404: not a Volcano app, or no Volcano installed
                raise KubernetesApiError.from_api(e, f"delete app {name!r}", namespace) from None
        batch = apis.BatchV1Api(client)
        core = apis.CoreV1Api(client)
        try:
            # Background propagation lets the garbage collector remove the pods too; they are
            # also deleted here so that nothing depends on how soon it gets to them.
            batch.delete_collection_namespaced_job(
                namespace, label_selector=selector, propagation_policy="Background"
            )
            for svc in core.list_namespaced_service(namespace, label_selector=selector).items:
                try:
                    core.delete_namespaced_service(svc.metadata.name, namespace)
                except apis.ApiException as e:
                    if e.status != 404:
                        raise
            core.delete_collection_namespaced_pod(namespace, label_selector=selector)
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(e, f"delete app {name!r}", namespace) from None


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
_INDEX_KEYS = (LABEL_REPLICA, "volcano.sh/task-index", "batch.kubernetes.io/job-completion-index")


def _pod_index(pod: Mapping[str, Any]) -> int | None:
    meta = pod.get("metadata") or {}
    for source in (meta.get("annotations") or {}, meta.get("labels") or {}):
        for key in _INDEX_KEYS:
            if str(source.get(key, "")).isdigit():
                return int(source[key])
    tail = str(meta.get("name", "")).rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _attempt_order(pod: Mapping[str, Any]) -> tuple[str, bool, str]:
    """Sorts a replica's pods oldest attempt first.

    creationTimestamp has whole seconds only, so a retry made within the second of its
    failed predecessor ties with it. A Job runs one pod at a time: of two such pods the one
    that has not ended is the newer, and of two ended ones the one that started later.
    Attempts that began and ended within one second cannot be told apart by any client.
    """
    created = str((pod.get("metadata") or {}).get("creationTimestamp") or "")
    status = pod.get("status") or {}
    ended = status.get("phase") in ("Succeeded", "Failed")
    return created, not ended, str(status.get("startTime") or "")


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
        if seen is None or _attempt_order(pod) >= _attempt_order(seen):
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
                    if replica.exit_code != 0:
                        # What the kubelet saw: OOMKilled, Error, ... and its message if any.
                        why = [ended.get("reason"), ended.get("message")]
                        replica.structured_error_msg = ": ".join(str(w) for w in why if w)


def _role_of(name: str, template: Mapping[str, Any], replicas: int) -> Role:
    """The role as far as its pod template tells (image and command line)."""
    container = ((template.get("spec") or {}).get("containers") or [{}])[0]
    command = list(container.get("command") or [])
    return Role(
        name,
        image=str(container.get("image") or ""),
        entrypoint=command[0] if command else "",
        args=command[1:] + list(container.get("args") or []),
        num_replicas=replicas,
    )


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
        roles=[
            _role_of(rs.role, task["template"], len(rs.replicas))
            for rs, task in zip(roles, vjob.get("spec", {}).get("tasks", []), strict=True)
        ],
        state=_VOLCANO_STATES.get(phase, AppState.UNKNOWN),
        num_restarts=int(status.get("retryCount", 0)),
        msg=(status.get("state") or {}).get("message", ""),
        roles_statuses=roles,
    )


def _job_state(job: Mapping[str, Any]) -> AppState:
    status = job.get("status") or {}
    conds = {c["type"]: c["status"] for c in status.get("conditions") or []}
    if (job["metadata"].get("annotations") or {}).get(CANCELLED_ANNOTATION) == "true":
        return AppState.CANCELLED
    if conds.get("Failed") == "True":
        return AppState.FAILED
    if conds.get("Complete") == "True":
        return AppState.SUCCEEDED
    if status.get("active"):
        return AppState.RUNNING
    return AppState.PENDING


def _describe_batch(
    app_id: str, jobs: list[dict[str, Any]], pods: Iterable[Mapping[str, Any]] = ()
) -> DescribeAppResponse:
    """One Job per replica: each Job's labels name its role and replica id."""
    by_role: dict[str, dict[int, AppState]] = {}
    templates: dict[str, Mapping[str, Any]] = {}
    restarts = 0
    for job in jobs:
        labels = job["metadata"].get("labels") or {}
        role = labels.get(LABEL_ROLE, job["metadata"]["name"])
        index = str(labels.get(LABEL_REPLICA, "0"))
        # Each failed pod was followed by a retry, except the last one of a Job that failed.
        state = _job_state(job)
        failed = int((job.get("status") or {}).get("failed") or 0)
        restarts += max(failed - (1 if state == AppState.FAILED else 0), 0)
        by_role.setdefault(role, {})[int(index) if index.isdigit() else 0] = state
        templates.setdefault(role, (job.get("spec") or {}).get("template") or {})
    roles = [
        RoleStatus(
            role, [ReplicaStatus(id=i, state=st, role=role) for i, st in sorted(reps.items())]
        )
        for role, reps in by_role.items()
    ]
    _apply_pods(roles, pods)
    for rs in roles:
        for replica in rs.replicas:
            final = by_role[rs.role][replica.id]
            # A finished Job speaks for its replica; while it runs, its newest pod does.
            if final in (AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED):
                replica.state = final
    # From the replicas, not the Jobs: a Job whose pod waits to be scheduled is "active".
    states = {replica.state for rs in roles for replica in rs.replicas}
    overall: AppState = AppState.SUCCEEDED
    order = (AppState.CANCELLED, AppState.FAILED, AppState.RUNNING, AppState.PENDING)
    for s in (*order, AppState.UNKNOWN):
        if s in states:
            overall = s
            break
    return DescribeAppResponse(
        app_id=app_id,
        state=overall,
        num_restarts=restarts,
        roles_statuses=roles,
        roles=[_role_of(rs.role, templates[rs.role], len(rs.replicas)) for rs in roles],
    )


def _pod_template(
    app: AppDef,
    app_id: str,
    role: Role,
    cfg: Mapping[str, CfgVal],
    replica_id: str,
    rank0_host: str,
    labels: dict[str, str],
) -> dict[str, Any]:
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
        # Empty lists are left out, as the server stores them.
        **({"args": list(filled.args)} if filled.args else {}),
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
    if cfg.get("tolerations"):
        spec["tolerations"] = [parse_toleration(str(t)) for t in cfg["tolerations"]]  # type: ignore[union-attr]
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
    rank0_host = f"{app_id}-{to_dns_label(app.roles[0].name, ROLE_NAME_CHARS)}-0.{app_id}"
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
            task = to_dns_label(role.name, ROLE_NAME_CHARS)
            labels = {**base, LABEL_ROLE: to_dns_label(role.name, 63)}
            template = _pod_template(app, app_id, role, cfg, "$(VC_TASK_INDEX)", rank0_host, labels)
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
        task = to_dns_label(role.name, ROLE_NAME_CHARS)
        for k in range(role.num_replicas):
            name = f"{app_id}-{task}-{k}"
            labels = {**base, LABEL_ROLE: to_dns_label(role.name, 63), LABEL_REPLICA: str(k)}
            template = _pod_template(app, app_id, role, cfg, str(k), rank0_host, labels)
            template["spec"]["hostname"] = name
            template["spec"]["subdomain"] = app_id
            manifests.append(
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
                    "spec": {
                        "completions": 1,
                        "parallelism": 1,
                        # Each failed pod is replaced by a new one, up to max_retries times.
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
    ``api=batch`` a List of the headless Service and one batch/v1 Job per replica."""
    resolved = dict(cfg or {})
    req = build_request(
        app, app_id or make_unique(to_dns_label(app.name, APP_NAME_CHARS)), resolved
    )
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
    rank0_host = f"{app_id}-{to_dns_label(role.name, ROLE_NAME_CHARS)}-0.{app_id}"
    template = _pod_template(app, app_id, role, dict(cfg or {}), "0", rank0_host, labels)
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
    tolerations: list[str]
    labels: dict[str, str]
    shm_size: str
    image_repo: str
    quiet: bool


def _repo_and_tag(pushed: str) -> tuple[str, str]:
    repo, _, tag = pushed.rpartition(":")
    return repo, tag


# pytorch/torchx 0.7's module-level names, for code that imports them from here.
LABEL_ROLE_NAME = LABEL_ROLE
LABEL_REPLICA_ID = LABEL_REPLICA
LABEL_ORGANIZATION = LABEL_MANAGED
# 0.7 also labelled pods with these; this scheduler's pods carry the labels pod_labels()
# returns, so selectors built on the keys below match nothing here.
LABEL_VERSION = f"{LABEL_PREFIX}/version"
LABEL_ROLE_INDEX = f"{LABEL_PREFIX}/role-index"
LABEL_KUBE_APP_NAME = "app.kubernetes.io/name"
LABEL_UNIQUE_NAME = "app.kubernetes.io/instance"
LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ANNOTATION_ISTIO_SIDECAR = "sidecar.istio.io/inject"
# 0.7 took 100 millicpu and 1024 MB off each request for the node's daemons; here a pod
# requests exactly the role's resource, so nothing is reserved.
RESERVED_MILLICPU = 0
RESERVED_MEMMB = 0
# The Volcano task policies each retry policy becomes (with max_retries > 0).
RETRY_POLICIES: Mapping[str, list[dict[str, str]]] = {
    str(policy.value): [
        {"event": "PodEvicted", "action": action},
        {"event": "PodFailed", "action": action},
    ]
    for policy, action in _VOLCANO_ACTIONS.items()
}
JOB_STATE: Mapping[str, AppState] = dict(_VOLCANO_STATES)
TASK_STATE: Mapping[str, AppState] = dict(_POD_PHASES)
# A dryrun's request; 0.7 called it KubernetesJob.
KubernetesJob = KubernetesRequest


def pod_labels(
    app: AppDef, role_idx: int, role: Role, replica_id: int, app_id: str
) -> dict[str, str]:
    """The labels this scheduler puts on replica ``replica_id`` of ``role``'s pod.

    ``role_idx`` is accepted for 0.7's signature; pods here are told apart by role name.
    """
    return {
        LABEL_MANAGED: "torchx",
        LABEL_APP_ID: app_id,
        LABEL_APP_NAME: to_dns_label(app.name, 63),
        LABEL_ROLE: to_dns_label(role.name, 63),
        LABEL_REPLICA: str(replica_id),
    }


def sanitize_for_serialization(obj: object) -> object:
    """``obj`` (a kubernetes client model, or plain data holding some) as plain JSON data."""
    client: Any = require("kubernetes.client", scheduler=BACKEND, extra=EXTRA)
    return client.ApiClient().sanitize_for_serialization(obj)
