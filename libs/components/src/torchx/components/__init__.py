"""torchx.components: builtin components and the lookup of components by name.

A component is a typed function returning a ``torchx.specs.AppDef``; its docstring's
``Args:`` become the help of ``torchx run NAME --help``.
"""

from torchx.components._common import IMAGE
from torchx.components._discovery import (
    BUILTIN_GROUPS,
    ComponentNotFoundError,
    components_of,
    get_component,
    list_components,
)

__all__ = [
    "BUILTIN_GROUPS",
    "IMAGE",
    "ComponentNotFoundError",
    "components_of",
    "get_component",
    "list_components",
]
