"""Named devices (``Resource.devices``) as the device files a container must be given."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping

from torchx.specs import DeviceMount
from torchx.specs.named_resources_aws import EFA_DEVICE, NEURON_DEVICE


def to_devicemounts(num_devices: int, device_type: str) -> list[DeviceMount]:
    """``device_type`` + ``0 .. num_devices-1``, each mounted at the same path."""
    return [
        DeviceMount(src_path=f"{device_type}{i}", dst_path=f"{device_type}{i}")
        for i in range(num_devices)
    ]


neuron_to_devicemounts: Callable[[int], list[DeviceMount]] = functools.partial(
    to_devicemounts, device_type="/dev/neuron"
)
efa_to_devicemounts: Callable[[int], list[DeviceMount]] = functools.partial(
    to_devicemounts, device_type="/dev/infiniband/uverbs"
)

DEVICES: Mapping[str, Callable[[int], list[DeviceMount]]] = {
    EFA_DEVICE: efa_to_devicemounts,
    NEURON_DEVICE: neuron_to_devicemounts,
}


def get_device_mounts(devices: Mapping[str, int]) -> list[DeviceMount]:
    """The device mounts for ``{device name: count}``; an unknown name is skipped with a
    warning naming it."""
    mounts: list[DeviceMount] = []
    for name, count in devices.items():
        make = DEVICES.get(name)
        if make is None:
            warnings.warn(
                f"unknown named device {name!r} (known: {', '.join(sorted(DEVICES))}); "
                "it gets no device files",
                stacklevel=2,
            )
            continue
        mounts += make(count)
    return mounts


__all__ = [
    "DEVICES",
    "efa_to_devicemounts",
    "get_device_mounts",
    "neuron_to_devicemounts",
    "to_devicemounts",
]
