"""pytorch/torchx's ``torchx.specs.builders``: build an AppDef from a component and CLI args."""

from torchx.specs._component import materialize_appdef
from torchx.specs._component import parse_component_args as parse_args
from torchx.specs._handle import make_app_handle
from torchx.specs._mounts import parse_mounts

__all__ = ["make_app_handle", "materialize_appdef", "parse_args", "parse_mounts"]
