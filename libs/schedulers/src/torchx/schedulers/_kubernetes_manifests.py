"""The Kubernetes manifests of an app: a Volcano Job, or batch/v1 Jobs and a headless Service.

Plain dicts, as ``kubectl apply`` reads them, built without a cluster or the client library;
see ``kubernetes_scheduler`` for where the replicas find each other.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torchx.schedulers._container_rules import (
    check_image_repo,
    check_label_key,
    check_label_value,
    check_labels,
    checked_roles,
    to_dns_label,
)
from torchx.schedulers._preemption_notes import grace_seconds
from torchx.schedulers._replicas import role_replicas
from torchx.schedulers.ids import DEFAULT_SUFFIX_LENGTH
from torchx.specs import (
    AppDef,
    BindMount,
    CfgVal,
    DeviceMount,
    RetryPolicy,
    Role,
    SpecsError,
    VolumeMount,
)
from torchx.workspace.docker_workspace import WORKSPACE_REPO

BACKEND = "kubernetes"
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
VOLCANO_ACTIONS = {
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

    @property
    def resource(self) -> dict[str, Any]:
        """0.7's name for what is created: the Volcano Job, or a ``List`` of the objects
        (``api=batch``). A plain manifest, not a kubernetes client model."""
        if len(self.manifests) == 1:
            return self.manifests[0]
        return {"apiVersion": "v1", "kind": "List", "items": self.manifests}

    @property
    def images_to_push(self) -> dict[str, tuple[str, str]]:
        """0.7's form of ``push``: workspace image -> (repository, tag)."""
        return {src: _split_repo_tag(dst) for src, dst in self.push.items()}


def _split_repo_tag(ref: str) -> tuple[str, str]:
    # The tag follows the last ':' after the last '/' (a registry's port is no tag).
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        return ref[:colon], ref[colon + 1 :]
    return ref, "latest"


# Kubernetes' own default terminationGracePeriodSeconds.
POD_GRACE_S = 30


def format_request(req: KubernetesRequest) -> str:
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


def check_app(app: AppDef, cfg: Mapping[str, CfgVal]) -> None:
    seen: set[str] = set()
    for where, role in checked_roles(app.roles):
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
    if cfg.get("image_repo") is not None:
        check_image_repo(cfg["image_repo"])
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


def pod_template(
    app: AppDef,
    app_id: str,
    role: Role,
    cfg: Mapping[str, CfgVal],
    replica_id: str,
    rank0_host: str,
    labels: dict[str, str],
) -> dict[str, Any]:
    (replica,) = role_replicas(
        role,
        app_id=app_id,
        rank0_host=rank0_host,
        master_port=MASTER_PORT,
        replica_id=replica_id,
    )
    filled, env = replica.filled, replica.env
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
        # the warning a torchx.runtime.preemption app checkpoints on comes this long
        # before the kill
        "terminationGracePeriodSeconds": grace_seconds(
            "termination_grace_seconds", cfg.get("termination_grace_seconds"), POD_GRACE_S
        ),
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
            template = pod_template(app, app_id, role, cfg, "$(VC_TASK_INDEX)", rank0_host, labels)
            entry: dict[str, Any] = {
                "name": task,
                "replicas": role.num_replicas,
                "minAvailable": role.min_replicas or role.num_replicas,
                "template": template,
            }
            if role.max_retries > 0:
                entry["maxRetry"] = role.max_retries
                action = VOLCANO_ACTIONS[RetryPolicy(role.retry_policy)]
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
            template = pod_template(app, app_id, role, cfg, str(k), rank0_host, labels)
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
