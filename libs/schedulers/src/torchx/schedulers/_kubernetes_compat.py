"""pytorch/torchx 0.7's names in ``kubernetes_scheduler``: manifests built without a
scheduler (``app_to_resource``, ``role_to_pod``), the typed run options, its label keys and
state tables."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, overload

from torchx.schedulers import _kubernetes_manifests as manifests
from torchx.schedulers._container_rules import to_dns_label
from torchx.schedulers._errors import require
from torchx.schedulers._kubernetes_status import POD_PHASES, VOLCANO_STATES
from torchx.schedulers.ids import make_unique
from torchx.specs import AppDef, AppState, CfgVal, Role, SpecsError


@overload
def app_to_resource(
    app: AppDef,
    cfg: Mapping[str, CfgVal] | None = None,
    app_id: str | None = None,
    *,
    service_account: str | None = None,
    priority_class: str | None = None,
) -> dict[str, Any]: ...


@overload
def app_to_resource(
    app: AppDef,
    queue: str,
    /,  # the implementation reads it as cfg: by position only
    service_account: str | None = None,
    priority_class: str | None = None,
    *,
    app_id: str | None = None,
) -> dict[str, Any]: ...


@overload
def app_to_resource(
    app: AppDef,
    *,
    queue: str,
    service_account: str | None = None,
    priority_class: str | None = None,
    app_id: str | None = None,
) -> dict[str, Any]: ...


def app_to_resource(
    app: AppDef,
    cfg: Mapping[str, CfgVal] | str | None = None,
    *args: str | None,
    queue: str | None = None,
    app_id: str | None = None,
    service_account: str | None = None,
    priority_class: str | None = None,
) -> dict[str, Any]:
    """The object that runs ``app``: a Volcano Job (``api=volcano``, the default), or for
    ``api=batch`` a List of the headless Service and one batch/v1 Job per replica.

    Written ``app_to_resource(app, cfg, app_id)``. 0.7's form ``app_to_resource(app, queue,
    service_account, priority_class)`` works as it did: a str in place of ``cfg`` (or
    ``queue=`` by name) is the Volcano queue, and the arguments after it are 0.7's (the app
    id is generated, as in 0.7). ``app_id`` None (or left out) is a generated id; an empty
    one is refused.
    """
    if queue is not None:
        if cfg is not None or args:
            raise SpecsError(
                "app_to_resource's queue",
                queue,
                "give the queue once: by name (0.7's form) or as cfg, not both",
            )
        cfg = queue
    names = ("service_account", "priority_class") if isinstance(cfg, str) else ("app_id",)
    if len(args) > len(names):
        raise SpecsError(
            "app_to_resource's arguments",
            args,
            f"after cfg it takes {' and '.join(names)} by position; name the others",
        )
    given = {
        "app_id": app_id,
        "service_account": service_account,
        "priority_class": priority_class,
    }
    for name, value in zip(names, args, strict=False):
        if given[name] is not None:
            raise SpecsError(
                f"app_to_resource parameter {name!r}", value, "give it once, by position or name"
            )
        given[name] = value
    if given["app_id"] == "":
        raise SpecsError(
            "app_to_resource's app_id", "", "give an app id, or None for a generated one"
        )
    resolved = _with_pod_options(cfg, given["service_account"], given["priority_class"])
    app_id = given["app_id"] or make_unique(to_dns_label(app.name, manifests.APP_NAME_CHARS))
    return manifests.build_request(app, app_id, resolved).resource


def _with_pod_options(
    cfg: Mapping[str, CfgVal] | str | None,
    service_account: str | None,
    priority_class: str | None,
) -> dict[str, CfgVal]:
    resolved: dict[str, CfgVal] = {"queue": cfg} if isinstance(cfg, str) else dict(cfg or {})
    if service_account is not None:
        resolved["service_account"] = service_account
    if priority_class is not None:
        resolved["priority_class"] = priority_class
    return resolved


def role_to_pod(
    name: str,
    role: Role,
    service_account: str | None = None,
    *,
    app_id: str = "",
    cfg: Mapping[str, CfgVal] | None = None,
) -> dict[str, Any]:
    """A Pod manifest running one replica (replica 0) of ``role``, as ``app_to_resource``
    templates it. The third argument is the service account, as in 0.7; the app id (default
    ``name``) and the run options are given by name."""
    if service_account is not None and not isinstance(service_account, str):
        raise SpecsError(
            "role_to_pod's service_account",
            service_account,
            "give a service account name; pass run options as cfg= and the app id as app_id=",
        )
    app_id = app_id or name
    app = AppDef(name=name, roles=[role])
    labels = {
        manifests.LABEL_MANAGED: "torchx",
        manifests.LABEL_APP_ID: app_id,
        manifests.LABEL_ROLE: to_dns_label(role.name),
    }
    rank0_host = f"{app_id}-{to_dns_label(role.name, manifests.ROLE_NAME_CHARS)}-0.{app_id}"
    resolved = _with_pod_options(cfg, service_account, None)
    template = manifests.pod_template(app, app_id, role, resolved, "0", rank0_host, labels)
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
    termination_grace_seconds: int


LABEL_ROLE_NAME = manifests.LABEL_ROLE
LABEL_REPLICA_ID = manifests.LABEL_REPLICA
LABEL_ORGANIZATION = manifests.LABEL_MANAGED
# 0.7 also labelled pods with these; this scheduler's pods carry the labels pod_labels()
# returns, so selectors built on the keys below match nothing here.
LABEL_VERSION = f"{manifests.LABEL_PREFIX}/version"
LABEL_ROLE_INDEX = f"{manifests.LABEL_PREFIX}/role-index"
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
    for policy, action in manifests.VOLCANO_ACTIONS.items()
}
JOB_STATE: Mapping[str, AppState] = dict(VOLCANO_STATES)
TASK_STATE: Mapping[str, AppState] = dict(POD_PHASES)
# A dryrun's request; 0.7 called it KubernetesJob.
KubernetesJob = manifests.KubernetesRequest


def pod_labels(
    app: AppDef, role_idx: int, role: Role, replica_id: int, app_id: str
) -> dict[str, str]:
    """The labels this scheduler puts on replica ``replica_id`` of ``role``'s pod.

    ``role_idx`` is accepted for 0.7's signature; pods here are told apart by role name.
    """
    return {
        manifests.LABEL_MANAGED: "torchx",
        manifests.LABEL_APP_ID: app_id,
        manifests.LABEL_APP_NAME: to_dns_label(app.name, 63),
        manifests.LABEL_ROLE: to_dns_label(role.name, 63),
        manifests.LABEL_REPLICA: str(replica_id),
    }


def sanitize_for_serialization(obj: object) -> object:
    """``obj`` (a kubernetes client model, or plain data holding some) as plain JSON data."""
    client: Any = require("kubernetes.client", scheduler="kubernetes", extra="kubernetes")
    return client.ApiClient().sanitize_for_serialization(obj)


__all__ = [
    "ANNOTATION_ISTIO_SIDECAR",
    "JOB_STATE",
    "LABEL_INSTANCE_TYPE",
    "LABEL_KUBE_APP_NAME",
    "LABEL_ORGANIZATION",
    "LABEL_REPLICA_ID",
    "LABEL_ROLE_INDEX",
    "LABEL_ROLE_NAME",
    "LABEL_UNIQUE_NAME",
    "LABEL_VERSION",
    "RESERVED_MEMMB",
    "RESERVED_MILLICPU",
    "RETRY_POLICIES",
    "TASK_STATE",
    "KubernetesJob",
    "KubernetesOpts",
    "app_to_resource",
    "pod_labels",
    "role_to_pod",
    "sanitize_for_serialization",
]
