"""Finding components by name, as schemas.

The rules are ``torchx.specs.finder``'s (one set for the finder API, the CLI and the
runner):

- ``group.name``: a builtin (``utils.echo`` is ``torchx.components.utils.echo``) or a
  component of a ``torchx.components`` entry point (``PREFIX = module``);
- ``path/to/file.py:fn``: function ``fn`` of a Python file;
- ``path/to/file.py``: the file's only component function (found by reading the file,
  not running it).
"""

from __future__ import annotations

import types
from collections.abc import Callable

from torchx.specs import (
    AppDef,
    ComponentNotFoundException,
    ComponentSchema,
    all_component_functions,
    find_component_function,
    get_component_schema,
    is_component_function,
)

BUILTIN_GROUPS = ("utils", "dist", "serve", "metrics", "function")


class ComponentNotFoundError(ComponentNotFoundException):
    """No component has the given name; the message lists the closest ones.

    A subclass of pytorch/torchx's ComponentNotFoundException, so either ``except`` works.
    """


def components_of(module: types.ModuleType) -> dict[str, Callable[..., AppDef]]:
    """Public functions of ``module`` annotated to return an AppDef, by name."""
    return {name: obj for name, obj in vars(module).items() if is_component_function(obj, module)}


def get_component(name: str) -> ComponentSchema:
    """The schema of the component called ``name`` (see the module docstring)."""
    try:
        found, fn = find_component_function(name)
    except ComponentNotFoundException as e:
        if isinstance(e, ComponentNotFoundError):
            raise
        raise ComponentNotFoundError(e.field, e.value, e.expected) from None
    return get_component_schema(fn, found)


def list_components() -> dict[str, ComponentSchema]:
    """Every builtin and entry-point component, by name, sorted."""
    return {n: get_component_schema(fn, n) for n, fn in all_component_functions().items()}
