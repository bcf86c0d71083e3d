"""Find components by name: pytorch/torchx's ``torchx.specs.finder``.

``get_component("dist.ddp")`` and ``get_component("path/to/file.py:fn")`` return a
component record (``name``, ``description``, ``fn_name``, ``fn``, ``validation_errors``).
The rules (builtins, ``torchx.components`` entry points, files read with ``ast`` before
anything in them runs) are those of ``torchx.specs._discovery``, the same that
``torchx.components.get_component``, the CLI and the runner use.
"""

from __future__ import annotations

import abc
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torchx.specs._app import AppDef
from torchx.specs._component import (
    ComponentValidationException,
    validate_component,
)
from torchx.specs._discovery import (
    BUILTIN_MODULE,
    all_component_functions,
    file_component,
    find_component_function,
    is_component_function,
    module_components,
)
from torchx.specs._errors import ComponentNotFoundException
from torchx.specs.file_linter import get_fn_docstring


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


class ComponentsFinder(abc.ABC):
    @abc.abstractmethod
    def find(self) -> list[_Component]:
        """The components this finder knows."""


def is_namespace_package(module: types.ModuleType) -> bool:
    """Whether ``module`` is a namespace package (a folder without ``__init__.py``)."""
    return getattr(module, "__file__", None) is None


def is_package(module: types.ModuleType) -> bool:
    """Whether ``module`` is a package, regular or namespace (it has ``__path__``)."""
    return hasattr(module, "__path__")


def module_relname(module: types.ModuleType, relative_to: types.ModuleType) -> str:
    """``module``'s dotted name relative to ``relative_to`` (``""`` for the same module);
    a ValueError if it is not inside it."""
    name, base = module.__name__, relative_to.__name__
    if name == base:
        return ""
    if not name.startswith(base + "."):
        raise ValueError(f"`{name}` is not a submodule of `{base}`")
    return name[len(base) + 1 :]


class ModuleComponentsFinder(ComponentsFinder):
    """The components of a module and its submodules, named relative to it.

    With ``group`` set, the group replaces the module's own name as the prefix:
    ``ModuleComponentsFinder("pkg.comps", "my")`` names ``pkg.comps.train.fit`` as
    ``my.train.fit``; without it, as ``train.fit``.
    """

    def __init__(self, module: str | types.ModuleType, group: str) -> None:
        import importlib

        self.base_module = importlib.import_module(module) if isinstance(module, str) else module
        self.group = group

    def find(self) -> list[_Component]:
        return [_record(n, fn) for n, fn in module_components(self.base_module, self.group).items()]


class CustomComponentsFinder(ComponentsFinder):
    """The component ``function_name`` of the Python file ``filepath``."""

    def __init__(self, filepath: str, function_name: str) -> None:
        self._filepath = filepath
        self._function_name = function_name

    def find(self) -> list[_Component]:
        name, fn = file_component(f"{self._filepath}:{self._function_name}")
        return [_record(name, fn)]


def _all_components() -> dict[str, _Component]:
    return {name: _record(name, fn) for name, fn in all_component_functions().items()}


def get_components() -> dict[str, _Component]:
    """Every valid builtin and entry-point component, by name."""
    return {n: c for n, c in sorted(_all_components().items()) if not c.validation_errors}


def get_component(name: str) -> _Component:
    """The component called ``name`` (``group.fn`` or ``path/to/file.py:fn``).

    Raises ComponentNotFoundException if there is none, and ComponentValidationException
    if the function cannot be a component.
    """
    found, fn = find_component_function(name)
    component = _record(found, fn)
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
    """The source of a component as a file that runs on its own: a template to copy and
    edit. The function comes with the docstring it has when its module has run (a
    builtin's is completed with the help of the arguments builtins share, which its file
    leaves out), after the imports it needs and the helpers private to its module it uses.
    """
    from torchx.specs._source import template_source

    return template_source(get_component(name).fn)


__all__ = [
    "BUILTIN_MODULE",
    "ComponentNotFoundException",
    "ComponentValidationException",
    "ComponentsFinder",
    "CustomComponentsFinder",
    "ModuleComponentsFinder",
    "all_component_functions",
    "find_component_function",
    "get_builtin_source",
    "get_component",
    "get_components",
    "is_component_function",
    "is_namespace_package",
    "is_package",
    "module_relname",
]
