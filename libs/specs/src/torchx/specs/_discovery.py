"""Finding component functions: the one set of rules behind ``torchx.specs.finder``,
``torchx.components.get_component``, the CLI and the runner.

- A component in a module is a public function defined there whose return annotation is
  ``AppDef``. Modules are searched with their non-private submodules (packages only:
  namespace packages are not walked, as in pytorch/torchx 0.7).
- Builtins are the modules under ``torchx.components``, named relative to it
  (``utils.echo``). Each entry point ``PREFIX = module`` of the ``torchx.components`` group
  adds the components of ``module`` as ``PREFIX.<relative name>``; a prefix starting with
  ``_`` adds them with no prefix (0.7's ``_0 = my_project.bar``).
- The full module path of a component function (``torchx.components.utils.echo``) names it
  too.
- ``path/to/file.py:fn`` and ``path/to/file.py`` name a function of a file. The file is
  read with ``ast`` first and imported only when it defines that function (or, with no
  ``:fn``, exactly one function that returns an ``AppDef``), so a plain script given by
  mistake is never run.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from torchx.specs._app import AppDef
from torchx.specs._errors import (
    ComponentNotFoundException,
    SpecsError,
    close_matches,
    closest,
)

BUILTIN_MODULE = "torchx.components"
ENTRY_POINT_GROUP = "torchx.components"

ComponentFn = Callable[..., AppDef]


def is_component_function(obj: Any, module: types.ModuleType) -> bool:
    """A public function defined in ``module`` and annotated to return an AppDef."""
    if not inspect.isfunction(obj) or obj.__module__ != module.__name__:
        return False
    if obj.__name__.startswith("_"):
        return False
    ret = getattr(obj, "__annotations__", {}).get("return")
    return ret is AppDef or (isinstance(ret, str) and ret.rpartition(".")[2] == "AppDef")


def _submodules(module: types.ModuleType) -> Iterator[types.ModuleType]:
    if getattr(module, "__file__", None):  # a namespace package holds no functions
        yield module
    if not hasattr(module, "__path__"):
        return
    import pkgutil  # only when listing: a lookup by name imports one module

    for info in pkgutil.iter_modules(module.__path__, prefix=f"{module.__name__}."):
        if info.name.rpartition(".")[2].startswith("_"):
            continue  # private helpers hold no components
        sub = importlib.import_module(info.name)
        if info.ispkg:
            yield from _submodules(sub)
        else:
            yield sub


def module_components(module: str | types.ModuleType, prefix: str) -> dict[str, ComponentFn]:
    """The components of ``module`` and its submodules, named ``PREFIX.<relative name>``."""
    base = importlib.import_module(module) if isinstance(module, str) else module
    found: dict[str, ComponentFn] = {}
    for mod in _submodules(base):
        relative = mod.__name__[len(base.__name__) + 1 :]
        for fn_name, fn in vars(mod).items():
            if is_component_function(fn, mod):
                found[".".join(p for p in (prefix, relative, fn_name) if p)] = fn
    return found


def _plugins() -> list[tuple[str, str, str]]:
    """``(entry point name, prefix, module)`` for each ``torchx.components`` entry point."""
    from importlib.metadata import entry_points

    return [
        (ep.name, "" if ep.name.startswith("_") else ep.name, ep.value)
        for ep in entry_points(group=ENTRY_POINT_GROUP)
    ]


def all_component_functions() -> dict[str, ComponentFn]:
    """Every builtin and entry-point component, by name, sorted.

    A plug-in that cannot be imported is left out with a warning naming it, so one broken
    package does not hide the rest.
    """
    found = module_components(BUILTIN_MODULE, "")
    for ep_name, prefix, module in _plugins():
        try:
            found.update(module_components(module, prefix))
        except Exception as e:
            import logging

            logging.getLogger("torchx.specs.finder").warning(
                "torchx: skipping the components of plug-in %r (%s = %s): %s: %s",
                ep_name,
                ep_name,
                module,
                type(e).__name__,
                e,
            )
    return dict(sorted(found.items()))


def _in_module(module_name: str, fn_name: str) -> ComponentFn | None:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and module_name.startswith(e.name):
            return None  # no such module: the name is not of this prefix
        raise
    fn = getattr(module, fn_name, None)
    return fn if is_component_function(fn, module) else None


def find_component_function(name: str) -> tuple[str, ComponentFn]:
    """The component called ``name`` (see the module docstring): ``(name, function)``.

    A builtin is found by importing its one module, an entry-point component by importing
    the modules of the plug-ins whose prefix it has; only an unknown name lists them all.
    """
    if name.endswith(".py") or ".py:" in name:
        return file_component(name)
    parts = name.split(".")
    if all(p and not p.startswith("_") for p in parts) and len(parts) > 1:
        fn = _in_module(".".join([BUILTIN_MODULE, *parts[:-1]]), parts[-1])
        if fn is not None:
            return name, fn
    for _ep_name, prefix, module in _plugins():
        if prefix and not name.startswith(prefix + "."):
            continue
        relative = name[len(prefix) + 1 :] if prefix else name
        rel_parts = relative.split(".")
        if not all(p and not p.startswith("_") for p in rel_parts):
            continue
        fn = _in_module(".".join([module, *rel_parts[:-1]]), rel_parts[-1])
        if fn is not None:
            return name, fn
    # the full module path of a component function (``torchx.components.utils.echo``), as
    # 0.7's CLI docs show; only a module that exists is imported
    if len(parts) > 1 and _module_exists(".".join(parts[:-1])):
        fn = _in_module(".".join(parts[:-1]), parts[-1])
        if fn is not None:
            return name, fn
    if "/" in name or ":" in name:
        # a path: no builtin or plug-in name has one, so listing them would not help
        file_part, colon, fn_name = name.partition(":")
        if Path(file_part + ".py").expanduser().is_file():
            hint = _file_hint(f"{file_part}.py", colon + fn_name)
        else:
            hint = "a component in a file is named path/to/file.py:FN"
            near = close_matches(name.replace("/", "."), list(all_component_functions()), 1)
            hint += f", a builtin group.name: did you mean {near[0]!r}?" if near else ""
        raise ComponentNotFoundException("component", name, hint)
    known = list(all_component_functions())
    raise ComponentNotFoundException(
        "component", name, closest(name, known) + " (`torchx builtins` lists them all)"
    )


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# -- components in a file ---------------------------------------------------------------


def _names_appdef(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "AppDef"
    if isinstance(node, ast.Attribute):
        return node.attr == "AppDef"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rpartition(".")[2] == "AppDef"
    return False


def _returns_appdef(fn: ast.FunctionDef) -> bool:
    """Annotated ``-> AppDef``, or unannotated and returning ``...AppDef(...)`` (the
    component of 0.7's basics page has no annotation)."""
    if fn.returns is not None:
        return _names_appdef(fn.returns)
    return any(
        isinstance(node, ast.Return)
        and isinstance(node.value, ast.Call)
        and _names_appdef(node.value.func)
        for node in ast.walk(fn)
    )


def _file_functions(path: Path) -> dict[str, ast.FunctionDef]:
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SpecsError("component file", str(path), f"cannot be read: {e}") from None
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as e:
        raise SpecsError(
            f"component file {path}:{e.lineno}", e.text and e.text.strip(), f"not Python: {e.msg}"
        ) from None
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _components_of(functions: dict[str, ast.FunctionDef]) -> list[str]:
    """The component functions among a file's: public, returning an AppDef."""
    return [n for n, f in functions.items() if not n.startswith("_") and _returns_appdef(f)]


def _file_hint(file: str, fn_part: str) -> str:
    """The name to suggest for ``file`` (a component file the user named without ``.py``),
    with ``fn_part`` (``:FN`` or empty) as given: ``file:FN`` when the file does not have
    exactly one component function, which the file alone would need."""
    if fn_part:
        return f"did you mean '{file}{fn_part}'?"
    try:
        components = _components_of(_file_functions(Path(file).expanduser()))
    except SpecsError:
        components = []  # unreadable or not Python: its own error comes with the file
    if len(components) == 1:
        return f"did you mean '{file}'?"
    listed = f" (its component functions: {', '.join(components)})" if components else ""
    return f"did you mean '{file}:FN'?{listed}"


def file_component(spec: str) -> tuple[str, ComponentFn]:
    """The function ``fn`` of ``path/to/file.py:fn``, or the one component of
    ``path/to/file.py``; nothing in the file runs unless the function is there."""
    file_part, sep, fn_name = spec.rpartition(":")
    if not sep or not file_part.endswith(".py"):
        file_part, fn_name = spec, ""
    path = Path(file_part).expanduser()
    if not path.is_file():
        raise ComponentNotFoundException("component file", file_part, "no such file")
    functions = _file_functions(path)
    public = [n for n in functions if not n.startswith("_")]
    if fn_name and fn_name not in functions:
        raise ComponentNotFoundException(
            "component",
            spec,
            f"{file_part} defines no function {fn_name!r} (nothing in it was run); "
            + closest(fn_name, public or ["none"]),
        )
    if not fn_name:
        candidates = _components_of(functions)
        if len(candidates) != 1:
            found = (
                f"{len(candidates)} component functions ({', '.join(candidates)})"
                if candidates
                else "no component function (one that returns an AppDef)"
            )
            raise ComponentNotFoundException(
                "component",
                spec,
                f"{file_part} defines {found} and nothing in it was run; name one as "
                f"{file_part}:FN, or run a script through a component: "
                f"torchx run utils.python --script {file_part}",
            )
        fn_name = candidates[0]
    module = _import_file(path)
    fn = getattr(module, fn_name, None)
    if not inspect.isfunction(fn):
        raise ComponentNotFoundException(
            "component", spec, f"{file_part}: {fn_name} is not a function once the file is loaded"
        )
    return f"{file_part}:{fn_name}", fn


def _import_file(path: Path) -> types.ModuleType:
    """Import ``path`` as a module; a failure names the file and the line."""
    module_name = f"torchx_component_file_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ComponentNotFoundException("component file", str(path), "not a loadable Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:
        del sys.modules[module_name]
        raise SpecsError(
            "component file",
            str(path),
            f"it called sys.exit({e.code!r}) while being loaded; keep the code that must "
            'not run on import under `if __name__ == "__main__":`',
        ) from None
    except Exception as e:
        del sys.modules[module_name]
        import traceback

        resolved = str(path.resolve())
        lines = [
            f.lineno
            for f in traceback.extract_tb(e.__traceback__)
            if f.filename in (str(path), resolved)
        ]
        where = f"{path}:{lines[-1]}" if lines else str(path)
        raise SpecsError(
            f"component file {where}",
            f"{type(e).__name__}: {e}",
            "raised while the file was being loaded; fix it there",
        ) from None
    return module
