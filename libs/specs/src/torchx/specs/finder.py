"""Find components by name: pytorch/torchx's ``torchx.specs.finder``.

``get_component("dist.ddp")`` and ``get_component("path/to/file.py:fn")`` return a
component record (``name``, ``description``, ``fn_name``, ``fn``, ``validation_errors``).

Modules are searched by name, as for any plugin: the modules registered in the
``torchx.components`` entry-point group (the entry point's name is the prefix of the
components it holds) and the builtins, the module named ``torchx.components``. The
``torchx`` command and ``torchx.runner`` find components the same way
(``torchx.components.get_component``); this module gives the records pytorch/torchx's
tooling expects.
"""

from __future__ import annotations

import abc
import importlib
import importlib.util
import inspect
import pkgutil
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchx.specs._app import AppDef
from torchx.specs._component import (
    ComponentValidationException,
    validate_component,
)
from torchx.specs._errors import ComponentNotFoundException, closest
from torchx.specs.file_linter import get_fn_docstring

# Where the builtins live when no entry point says otherwise.
BUILTIN_MODULE = "torchx.components"
_ENTRY_POINT_GROUP = "torchx.components"


@dataclass
class _Component:
    """A component found by name: the function, its description and its problems."""

    name: str
    description: str
    fn_name: str
    fn: Callable[..., AppDef]
    validation_errors: list[str] = field(default_factory=list)


def _record(name: str, fn: Callable[..., Any]) -> _Component:
    description, _ = get_fn_docstring(fn)
    problems = [p.message for p in validate_component(fn)]
    return _Component(name, description, fn.__name__, fn, problems)


def _returns_appdef(fn: Callable[..., Any]) -> bool:
    ret = getattr(fn, "__annotations__", {}).get("return")
    return ret is AppDef or (isinstance(ret, str) and ret.rpartition(".")[2] == "AppDef")


class ComponentsFinder(abc.ABC):
    @abc.abstractmethod
    def find(self) -> list[_Component]:
        """The components this finder knows."""


class ModuleComponentsFinder(ComponentsFinder):
    """The components of a module and its submodules, named relative to it.

    With ``group`` set, the group replaces the module's own name as the prefix:
    ``ModuleComponentsFinder("pkg.comps", "my")`` names ``pkg.comps.train.fit`` as
    ``my.train.fit``; without it, as ``train.fit``.
    """

    def __init__(self, module: str | types.ModuleType, group: str) -> None:
        self.base_module = importlib.import_module(module) if isinstance(module, str) else module
        self.group = group

    def _submodules(self, module: types.ModuleType) -> Iterator[types.ModuleType]:
        yield module
        for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
            if info.name.startswith("_"):
                continue  # private helpers hold no components
            sub = importlib.import_module(f"{module.__name__}.{info.name}")
            yield from self._submodules(sub)

    def find(self) -> list[_Component]:
        out = []
        base = self.base_module.__name__
        for module in self._submodules(self.base_module):
            relative = module.__name__[len(base) + 1 :] if module is not self.base_module else ""
            for fn_name, fn in vars(module).items():
                if (
                    inspect.isfunction(fn)
                    and fn.__module__ == module.__name__
                    and not fn_name.startswith("_")
                    and _returns_appdef(fn)
                ):
                    name = ".".join(p for p in (self.group, relative, fn_name) if p)
                    out.append(_record(name, fn))
        return out


class CustomComponentsFinder(ComponentsFinder):
    """The component ``function_name`` of the Python file ``filepath``."""

    def __init__(self, filepath: str, function_name: str) -> None:
        self._filepath = filepath
        self._function_name = function_name

    def find(self) -> list[_Component]:
        path = Path(self._filepath).expanduser()
        if not path.is_file():
            raise ComponentNotFoundException("component file", self._filepath, "no such file")
        module_name = f"torchx_component_file_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ComponentNotFoundException(
                "component file", self._filepath, "not a loadable Python file"
            )
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        fn = getattr(module, self._function_name, None)
        if not inspect.isfunction(fn):
            functions = [n for n, v in vars(module).items() if inspect.isfunction(v)]
            raise ComponentNotFoundException(
                "component",
                f"{self._filepath}:{self._function_name}",
                f"the file has no function {self._function_name!r}; "
                + closest(self._function_name, functions),
            )
        return [_record(f"{self._filepath}:{self._function_name}", fn)]


def _all_components() -> dict[str, _Component]:
    from importlib.metadata import entry_points

    found: dict[str, _Component] = {}
    for ep in entry_points(group=_ENTRY_POINT_GROUP):
        group = "" if ep.name.startswith("_") else ep.name
        for c in ModuleComponentsFinder(ep.value, group).find():
            found[c.name] = c
    for c in ModuleComponentsFinder(BUILTIN_MODULE, "").find():
        found.setdefault(c.name, c)
    return found


def get_components() -> dict[str, _Component]:
    """Every valid builtin and entry-point component, by name."""
    return {n: c for n, c in sorted(_all_components().items()) if not c.validation_errors}


def get_component(name: str) -> _Component:
    """The component called ``name`` (``group.fn`` or ``path/to/file.py:fn``).

    Raises ComponentNotFoundException if there is none, and ComponentValidationException
    if the function cannot be a component.
    """
    if ":" in name and name.rpartition(":")[0].endswith(".py"):
        path, _, fn_name = name.rpartition(":")
        (component,) = CustomComponentsFinder(path, fn_name).find()
    else:
        components = _all_components()
        if name not in components:
            raise ComponentNotFoundException(
                "component",
                name,
                closest(name, list(components)) + " (`torchx builtins` lists them all)",
            )
        component = components[name]
    if component.validation_errors:
        raise ComponentValidationException(
            name,
            [_problem(component.fn, text) for text in component.validation_errors],
        )
    return component


def _problem(fn: Callable[..., Any], text: str) -> Any:
    from torchx.specs._component import ComponentProblem

    code = getattr(fn, "__code__", None)
    return ComponentProblem(
        code.co_filename if code else "<unknown>", code.co_firstlineno if code else 0, text
    )


def get_builtin_source(name: str) -> str:
    """The source of a component with its module's imports: a template to copy and edit."""
    fn = get_component(name).fn
    import ast

    module_source = inspect.getsource(sys.modules[fn.__module__])
    imports = [
        ast.get_source_segment(module_source, node) or ""
        for node in ast.parse(module_source).body
        if isinstance(node, ast.Import)
        or (isinstance(node, ast.ImportFrom) and node.module != "__future__")
    ]
    return "\n".join([*imports, "", "", inspect.getsource(fn)])


def is_namespace_package(module: types.ModuleType) -> bool:
    """Whether ``module`` is a namespace package (a folder without ``__init__.py``)."""
    return getattr(module, "__file__", None) is None


def is_package(module: types.ModuleType) -> bool:
    """Whether ``module`` is a package, regular or namespace, rather than a single file."""
    return hasattr(module, "__path__")


def module_relname(module: types.ModuleType, relative_to: types.ModuleType) -> str:
    """``module``'s dotted name below ``relative_to`` (``"dist"`` for
    ``torchx.components.dist`` relative to ``torchx.components``; ``""`` for itself).

    Raises ValueError when ``module`` is not inside ``relative_to``.
    """
    name, base = module.__name__, relative_to.__name__
    if name == base:
        return ""
    if not name.startswith(base + "."):
        raise ValueError(f"module {name!r} is not inside {base!r}")
    return name[len(base) + 1 :]


__all__ = [
    "BUILTIN_MODULE",
    "ComponentNotFoundException",
    "ComponentValidationException",
    "ComponentsFinder",
    "CustomComponentsFinder",
    "ModuleComponentsFinder",
    "get_builtin_source",
    "get_component",
    "get_components",
    "is_namespace_package",
    "is_package",
    "module_relname",
]
