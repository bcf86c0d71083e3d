"""AWS instance types as named resources, under pytorch/torchx's module path and names.

``NAMED_RESOURCES`` maps ``aws_<instance type>`` to a factory; each factory is also a module
attribute named as in pytorch/torchx (``aws_p4d_24xlarge``). The same resources are
registered in ``torchx.specs.named_resources``, also under the bare instance type.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping

from torchx.specs._app import Resource
from torchx.specs._named_resources import AWS, AWS_MEM_TAX, EFA_DEVICE, NEURON_DEVICE
from torchx.specs._named_resources import INSTANCE_TYPE as K8S_ITYPE
from torchx.specs._named_resources import AWS_GiB as GiB

MEM_TAX = AWS_MEM_TAX
NAMED_RESOURCES: Mapping[str, Callable[[], Resource]] = AWS


def instance_type_from_resource(resource: Resource) -> str | None:
    """The AWS instance type a resource asks for, or None (with a warning) if it names none."""
    instance_type = resource.capabilities.get(K8S_ITYPE)
    if instance_type is None:
        warnings.warn(
            f"the resource names no instance type; set capabilities[{K8S_ITYPE!r}] (a named "
            "resource such as aws_p4d.24xlarge does) so that multi-node jobs land on one kind",
            stacklevel=2,
        )
    return instance_type


# ``aws_p3.8xlarge`` -> ``aws_p3_8xlarge``: the function names pytorch/torchx exports.
_FACTORIES = {name.replace(".", "_"): factory for name, factory in AWS.items()}


def __getattr__(name: str) -> Callable[[], Resource]:
    if name in _FACTORIES:
        return _FACTORIES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EFA_DEVICE",
    "K8S_ITYPE",
    "MEM_TAX",
    "NAMED_RESOURCES",
    "NEURON_DEVICE",
    "GiB",
    "instance_type_from_resource",
    *sorted(_FACTORIES),
]
