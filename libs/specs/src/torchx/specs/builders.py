"""pytorch/torchx's ``torchx.specs.builders``: build an AppDef from a component and CLI args,
and the mount types its ``parse_mounts`` returns."""

from torchx.specs._component import materialize_appdef
from torchx.specs._component import parse_component_args as parse_args
from torchx.specs._handle import make_app_handle
from torchx.specs._mounts import BindMount, DeviceMount, VolumeMount, parse_mounts

__all__ = [
    "BindMount",
    "DeviceMount",
    "VolumeMount",
    "make_app_handle",
    "materialize_appdef",
    "parse_args",
    "parse_mounts",
]
