"""Finding components by name.

Three kinds of names resolve to a component function:

- ``group.name``: a builtin (``utils.echo`` is ``torchx.components.utils.echo``) or an
  entry point of the ``torchx.components`` group (the entry point's name is the group,
  its value a module whose public component functions are named ``group.fn``);
- ``path/to/file.py:fn``: function ``fn`` of a Python file;
- ``path/to/file.py``: the file's only component function.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torchx.specs import (
    AppDef,
    ComponentNotFoundException,
    ComponentSchema,
    get_component_schema,
)

BUILTIN_GROUPS = ("utils", "dist", "serve", "metrics", "function")
_ENTRY_POINT_GROUP = "torchx.components"


class ComponentNotFoundError(ComponentNotFoundException):
    """No component has the given name; the message lists the closest ones.

    A subclass of pytorch/torchx's ComponentNotFoundException, so either ``except`` works.
    """


def _is_component(obj: Any, module: types.ModuleType) -> bool:
    if not inspect.isfunction(obj) or obj.__module__ != module.__name__:
        return False
    if obj.__name__.startswith("_"):
        return False
    ret = getattr(obj, "__annotations__", {}).get("return")
    return ret is AppDef or ret == "AppDef" or ret == "specs.AppDef"


def components_of(module: types.ModuleType) -> dict[str, Callable[..., AppDef]]:
    """Public functions of ``module`` annotated to return an AppDef, by name."""
    return {name: obj for name, obj in vars(module).items() if _is_component(obj, module)}


def _load_file(path: Path) -> types.ModuleType:
    if not path.is_file():
        raise ComponentNotFoundError("component file", str(path), "no such file")
    module_name = f"torchx_component_file_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ComponentNotFoundError("component file", str(path), "not a loadable Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _file_functions(module: types.ModuleType) -> dict[str, Callable[..., Any]]:
    # A file component may leave out its return annotation (the one in pytorch/torchx's
    # docs/source/basics.rst does): any public function defined in the file is a candidate.
    return {
        name: obj
        for name, obj in vars(module).items()
        if inspect.isfunction(obj) and obj.__module__ == module.__name__ and name[:1] != "_"
    }


def _from_file(name: str) -> ComponentSchema:
    file_part, sep, fn_name = name.rpartition(":")
    if not sep or not file_part.endswith(".py"):
        file_part, fn_name = name, ""
    path = Path(file_part).expanduser()
    module = _load_file(path)
    functions = _file_functions(module)
    if fn_name:
        if fn_name not in functions:
            from torchx.specs import closest

            raise ComponentNotFoundError(
                "component",
                name,
                f"{path} has no function {fn_name!r}; " + closest(fn_name, list(functions)),
            )
        return get_component_schema(functions[fn_name], name)
    candidates = components_of(module) or functions
    if len(candidates) != 1:
        listed = ", ".join(sorted(candidates)) or "none"
        raise ComponentNotFoundError(
            "component",
            name,
            f"{path} defines {len(candidates)} functions ({listed}); name one as {path}:FN",
        )
    ((fn_name, fn),) = candidates.items()
    return get_component_schema(fn, f"{path}:{fn_name}")


def _entry_point_modules() -> dict[str, str]:
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=_ENTRY_POINT_GROUP)}


def _group_module(group: str) -> types.ModuleType | None:
    if group in BUILTIN_GROUPS:
        try:
            return importlib.import_module(f"torchx.components.{group}")
        except ModuleNotFoundError as e:
            if e.name == f"torchx.components.{group}":
                return None  # a builtin group that this version does not ship
            raise
    target = _entry_point_modules().get(group)
    return importlib.import_module(target) if target else None


def get_component(name: str) -> ComponentSchema:
    """The schema of the component called ``name`` (see the module docstring)."""
    if name.endswith(".py") or ".py:" in name:
        return _from_file(name)
    group, sep, fn_name = name.rpartition(".")
    module = _group_module(group) if sep else None
    found = components_of(module) if module is not None else {}
    if fn_name in found:
        return get_component_schema(found[fn_name], name)
    from torchx.specs import closest

    raise ComponentNotFoundError("component", name, closest(name, list(list_components())))


def list_components() -> dict[str, ComponentSchema]:
    """Every builtin and entry-point component, by ``group.name``, sorted."""
    out: dict[str, ComponentSchema] = {}
    groups = list(BUILTIN_GROUPS) + sorted(set(_entry_point_modules()) - set(BUILTIN_GROUPS))
    for group in groups:
        module = _group_module(group)
        if module is None:
            continue
        for fn_name, fn in components_of(module).items():
            out[f"{group}.{fn_name}"] = get_component_schema(fn, f"{group}.{fn_name}")
    return dict(sorted(out.items()))
