"""What a role asks of the cluster, as kfp task settings; refuses what kfp cannot say."""

from __future__ import annotations

from dataclasses import dataclass

from torchx.pipelines.kfp._errors import KfpAdapterError
from torchx.specs import BindMount, DeviceMount, Role, VolumeMount

# Resource.capabilities key that picks the accelerator kfp asks for: a Kubernetes extended
# resource name ("amd.com/gpu") or, on Vertex AI, a type such as "NVIDIA_TESLA_T4".
ACCELERATOR_TYPE = "kfp.accelerator_type"
DEFAULT_ACCELERATOR = "nvidia.com/gpu"

_KUBERNETES_EXTRA = "install torchx-pipelines[kubernetes] (kfp-kubernetes) to apply it"
_K8S_SCHEDULER = "run the app through the kubernetes scheduler instead"


@dataclass(frozen=True)
class TaskResources:
    """Task settings for one stage. ``None`` leaves kfp's (the cluster's) default."""

    cpu: str | None = None
    memory: str | None = None
    accelerator_type: str | None = None
    accelerator_count: int = 0
    retries: int = 0
    node_selector: tuple[tuple[str, str], ...] = ()
    pvc_mounts: tuple[tuple[str, str], ...] = ()

    @property
    def needs_kubernetes(self) -> bool:
        return bool(self.node_selector or self.pvc_mounts)


def _cpu(cpu: float) -> str:
    millis = max(1, round(cpu * 1000))
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def _accelerator(where: str, role: Role) -> tuple[str | None, int]:
    res = role.resource
    chosen = res.capabilities.get(ACCELERATOR_TYPE)
    if chosen is not None and (not isinstance(chosen, str) or not chosen):
        raise KfpAdapterError(
            f"{where}.resource.capabilities[{ACCELERATOR_TYPE!r}]",
            chosen,
            f"give an accelerator name such as {DEFAULT_ACCELERATOR!r}",
        )
    gpu = res.gpu if res.gpu > 0 else 0
    devices = {k: v for k, v in res.devices.items() if v > 0}
    if gpu and devices:
        raise KfpAdapterError(
            f"{where}.resource.devices",
            res.devices,
            f"a kfp task has one accelerator and this role already asks for {gpu} gpu(s); "
            f"drop the devices or {_K8S_SCHEDULER}",
        )
    if len(devices) > 1:
        raise KfpAdapterError(
            f"{where}.resource.devices",
            res.devices,
            f"a kfp task has one accelerator; ask for one device kind or {_K8S_SCHEDULER}",
        )
    if devices:
        # One named device and no gpu is the same request as an accelerator of that kind.
        (name, count), *_ = devices.items()
        if chosen is not None and chosen != name:
            raise KfpAdapterError(
                f"{where}.resource.capabilities[{ACCELERATOR_TYPE!r}]",
                chosen,
                f"it contradicts resource.devices {res.devices}; keep one of the two",
            )
        return name, count
    if gpu:
        return chosen or DEFAULT_ACCELERATOR, gpu
    if chosen is not None:
        raise KfpAdapterError(
            f"{where}.resource.capabilities[{ACCELERATOR_TYPE!r}]",
            chosen,
            "resource.gpu is 0, so there is no accelerator to type; set gpu or drop it",
        )
    return None, 0


def _node_selector(where: str, role: Role, kubernetes: bool) -> tuple[tuple[str, str], ...]:
    labels = []
    for key in sorted(role.resource.capabilities):
        if key == ACCELERATOR_TYPE:
            continue
        value = role.resource.capabilities[key]
        field = f"{where}.resource.capabilities[{key!r}]"
        if not isinstance(value, str):
            raise KfpAdapterError(
                field, value, "only string capabilities map to kfp (as node selector labels)"
            )
        if not kubernetes:
            raise KfpAdapterError(
                field, value, f"kfp alone cannot select nodes by label; {_KUBERNETES_EXTRA}"
            )
        labels.append((key, value))
    return tuple(labels)


def _mounts(where: str, role: Role, kubernetes: bool) -> tuple[tuple[str, str], ...]:
    pvcs = []
    for i, mount in enumerate(role.mounts):
        field = f"{where}.mounts[{i}]"
        if isinstance(mount, VolumeMount):
            if mount.read_only:
                raise KfpAdapterError(
                    field,
                    mount,
                    "kfp-kubernetes mounts volumes read-write only; drop read_only or "
                    + _K8S_SCHEDULER,
                )
            if not kubernetes:
                raise KfpAdapterError(
                    field, mount, f"kfp alone cannot mount a volume; {_KUBERNETES_EXTRA}"
                )
            pvcs.append((mount.src, mount.dst_path))
        elif isinstance(mount, BindMount):
            raise KfpAdapterError(
                field,
                mount,
                "a kfp stage cannot mount host paths; use a volume mount (a PVC), pass data "
                f"between stages with output_path()/input_path(), or {_K8S_SCHEDULER}",
            )
        elif isinstance(mount, DeviceMount):
            raise KfpAdapterError(
                field, mount, f"a kfp stage cannot mount host devices; {_K8S_SCHEDULER}"
            )
        else:
            raise KfpAdapterError(field, mount, "give a BindMount, VolumeMount or DeviceMount")
    return tuple(pvcs)


def task_resources(role: Role, kubernetes: bool) -> TaskResources:
    """The kfp settings for ``role``; ``kubernetes`` says whether kfp-kubernetes is used.

    Requests equal limits: a torchx Resource is what the app needs, and asking for less
    than that would let the node overcommit and kill it under pressure.
    """
    where = f"role {role.name!r}"
    # role.port_map is not refused: kfp v2 cannot declare container ports, but on Kubernetes
    # a declared port is only informational; the stage listens on its pod's address either
    # way. Refusing it would turn away dist.ddp -j 1xN and serve.torchserve, which name one.
    res = role.resource
    accel_type, accel_count = _accelerator(where, role)
    return TaskResources(
        cpu=_cpu(res.cpu) if res.cpu > 0 else None,
        memory=f"{round(res.memMB)}Mi" if res.memMB > 0 else None,
        accelerator_type=accel_type,
        accelerator_count=accel_count,
        retries=role.max_retries,
        node_selector=_node_selector(where, role, kubernetes),
        pvc_mounts=_mounts(where, role, kubernetes),
    )
