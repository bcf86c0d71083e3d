"""Every library a distribution's code imports is one it declares (or the import is optional).

tools/check_imports.py rules the imports between torchx's own distributions; this covers the
others: an import that works here only because another distribution of the workspace pulled
the library in fails for a user who installs that one distribution.

An import is an ``import`` statement, or a call that imports a module named by a string
literal: ``importlib.import_module("lib")`` and the schedulers' ``require("lib", ...)``
(how docker, kubernetes, ray and kfp are loaded, only when used). An import inside a ``try``
whose ``except ImportError`` handler goes on without the library is optional; a handler that
raises makes it required all the same. A library that no installed distribution provides
cannot be traced to one, so it fails too, rather than passing unchecked.

A library that only an extra declares (``optional-dependencies``) must not be imported
when the distribution's core is: not at module level (an ``if TYPE_CHECKING`` block, a
function body and an optional import aside) of any module that importing the distribution
loads. That core is each top-level package's ``__init__`` and each console script, and
everything they import at module level or in a PEP 562 ``__getattr__``, and the modules
their public names (``__all__``) come from, followed through ``from . import``,
``import a.b`` and the ``"module:attr"`` strings a module loads by name (the scheduler
registry). A plain install (no extra) breaks on such an import, though the extra declares
the library.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.metadata
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
MEMBERS = sorted(p.parent for p in REPO.glob("*/*/pyproject.toml"))
_OPTIONAL = {"ImportError", "ModuleNotFoundError"}
# Functions whose first argument names a module they import.
_IMPORTING_CALLS = {"import_module", "require"}
# Libraries imported by the source that cannot be installed in this environment, so no
# distribution can be traced for them here. Each entry says why it is legitimately absent.
_NOT_INSTALLABLE_HERE: dict[str, str] = {}


@functools.cache
def _providers() -> dict[str, set[str]]:
    """The installed distributions providing each top-level module (read once: slow)."""
    return {
        module: {_normal(d) for d in dists}
        for module, dists in importlib.metadata.packages_distributions().items()
    }


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project(member: Path) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((member / "pyproject.toml").read_text())["project"]
    return project


def _names(requirements: list[str]) -> set[str]:
    return {_normal(re.split(r"[\s<>=!~;\[@]", r, maxsplit=1)[0]) for r in requirements}


def _declared(member: Path) -> set[str]:
    """The distributions ``member`` requires, in any of its extras too."""
    project = _project(member)
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    return _names(requirements)


def _core_declared(member: Path) -> set[str]:
    """The distributions ``member`` requires without any extra."""
    return _names(list(_project(member).get("dependencies", [])))


def _catches_import_error(node: ast.Try) -> bool:
    """Whether ``node`` goes on without the library when the import fails: it catches
    ImportError in a handler that raises nothing (one that raises makes the import required)."""
    for handler in node.handlers:
        caught = handler.type
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        if any(isinstance(n, ast.Name) and n.id in _OPTIONAL for n in names):
            return not _raises(handler.body)
    return False


def _raises(body: list[ast.stmt]) -> bool:
    """Whether ``body`` can raise on its own: a ``raise`` outside the handlers of a nested
    ``try`` (which raise on another failure, such as a fallback's) and nested functions."""
    for node in body:
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Try):
            if _raises([*node.body, *node.orelse, *node.finalbody]):
                return True
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            nested = [n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt)]
            if _raises(nested):
                return True
    return False


def _imported_by_name(node: ast.Call) -> str | None:
    """The top-level module a call imports by its name, given as a string literal:
    ``importlib.import_module("a.b")``, ``import_module("a")``, ``require("a", ...)``."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if called not in _IMPORTING_CALLS or not node.args:
        return None
    first = node.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None  # a name computed at run time cannot be checked here
    if first.value.startswith("."):
        return None  # relative to the importing package: the distribution's own module
    return first.value.partition(".")[0]


def _required_imports(node: ast.AST) -> Iterator[str]:
    """Top-level modules imported by ``node``, leaving out those in a ``try`` that catches
    ImportError (an optional library, used only when present)."""
    if isinstance(node, ast.Try) and _catches_import_error(node):
        for child in [*node.handlers, *node.orelse, *node.finalbody]:
            yield from _required_imports(child)
        return
    if isinstance(node, ast.Import):
        yield from (alias.name.partition(".")[0] for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        yield node.module.partition(".")[0]
    elif isinstance(node, ast.Call) and (module := _imported_by_name(node)):
        yield module
    for child in ast.iter_child_nodes(node):
        yield from _required_imports(child)


def _third_party_imports(member: Path) -> Iterator[tuple[str, str]]:
    """Each import of a library outside the stdlib and torchx, with the file importing it."""
    for source in sorted((member / "src").rglob("*.py")):
        for module in _required_imports(ast.parse(source.read_text(), str(source))):
            if module not in sys.stdlib_module_names and module != "torchx":
                yield module, str(source.relative_to(member))


def _undeclared(member: Path) -> dict[str, str]:
    """Each imported library no requirement of ``member`` provides, with a file importing it."""
    declared = _declared(member)
    undeclared: dict[str, str] = {}
    for module, source in _third_party_imports(member):
        provided_by = _providers().get(module, set())
        if provided_by and not provided_by & declared:
            undeclared.setdefault(module, source)
    return undeclared


def _untraceable(member: Path) -> dict[str, str]:
    """Each imported library no installed distribution provides, with a file importing it:
    nothing tells whether ``member`` declares it."""
    untraceable: dict[str, str] = {}
    for module, source in _third_party_imports(member):
        if module not in _providers() and module not in _NOT_INSTALLABLE_HERE:
            untraceable.setdefault(module, source)
    return untraceable


def _module_files(member: Path) -> dict[str, Path]:
    """Each module of ``member`` by dotted name (a package by its ``__init__``'s)."""
    found: dict[str, Path] = {}
    for source in sorted((member / "src").rglob("*.py")):
        parts = list(source.relative_to(member / "src").with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = source
    return found


def _core_roots(member: Path, modules: dict[str, Path]) -> set[str]:
    """What importing ``member`` runs first: each module none of whose parents is one of
    its modules (its top-level packages, ``torchx`` itself being a namespace, and modules
    directly under one), and the modules of its console scripts."""
    roots = set()
    for name in modules:
        parts = name.split(".")
        if not any(".".join(parts[:i]) in modules for i in range(1, len(parts))):
            roots.add(name)
    for target in _project(member).get("scripts", {}).values():
        roots.add(target.partition(":")[0])
    return roots & set(modules)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_time(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The import statements, importing calls and strings that run when a module with
    ``body`` is imported, or one of its names is looked up through its ``__getattr__``: not
    in another function's body, an ``if TYPE_CHECKING`` block or the ``try`` of an optional
    import (a class body runs, so it is searched)."""
    for node in body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            # a module's __getattr__ (PEP 562) loads what its public names need
            yield from _import_time(node.body)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        elif isinstance(node, ast.ClassDef):
            yield from _import_time(node.body)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _import_time(node.body)
            yield from _import_time(node.orelse)
        elif isinstance(node, ast.Try):
            if not _catches_import_error(node):
                yield from _import_time(node.body)
            for handler in node.handlers:
                yield from _import_time(handler.body)
            yield from _import_time([*node.orelse, *node.finalbody])
        elif isinstance(node, (ast.With, ast.For, ast.While)):
            yield from _import_time([*node.body, *getattr(node, "orelse", [])])
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        else:
            for child in ast.walk(node):
                if isinstance(child, (ast.Call, ast.Constant)):
                    yield child


def _targets(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """The dotted names of the modules ``node`` (an import-time node of ``module``) loads."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            yield from (".".join(parts[: i + 1]) for i in range(len(parts)))
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            package = module if is_package else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{node.module}" if node.module else package
        else:
            base = node.module or ""
        parts = base.split(".")
        yield from (".".join(parts[: i + 1]) for i in range(len(parts)))
        yield from (f"{base}.{alias.name}" for alias in node.names)
    elif isinstance(node, ast.Call) and _imported_by_name(node) is not None:
        first = node.args[0]
        assert isinstance(first, ast.Constant)
        yield str(first.value)
    elif (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        # "package.module:attr", as the scheduler registry names what it loads
        and re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*", node.value)
    ):
        yield node.value.partition(":")[0]


def _public_homes(tree: ast.Module) -> Iterator[ast.ImportFrom]:
    """The module-level ``from X import name`` of a name in the module's ``__all__``, an
    ``if TYPE_CHECKING`` block's too: where a public name loaded lazily (PEP 562) comes
    from is loaded as soon as that name is used."""
    public: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            with contextlib.suppress(ValueError):
                public = set(ast.literal_eval(node.value))
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If):
            stack += [*node.body, *node.orelse]
        elif isinstance(node, ast.ImportFrom) and any(
            (a.asname or a.name) in public for a in node.names
        ):
            yield node


def _core_modules(member: Path) -> dict[str, Path]:
    """Every module of ``member`` that importing it loads (see the module's docstring)."""
    modules = _module_files(member)
    todo = sorted(_core_roots(member, modules))
    core: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        if name in core:
            continue
        core[name] = path = modules[name]
        tree = ast.parse(path.read_text(), str(path))
        for node in [*_import_time(tree.body), *_public_homes(tree)]:
            for target in _targets(node, name, path.name == "__init__.py"):
                if target in modules and target not in core:
                    todo.append(target)
    return core


def _extra_only_in_core(member: Path) -> dict[str, str]:
    """Each library only an extra of ``member`` declares that its core imports, with the
    file importing it."""
    core_declared = _core_declared(member)
    extra_only = _declared(member) - core_declared
    found: dict[str, str] = {}
    for path in sorted(_core_modules(member).values()):
        tree = ast.parse(path.read_text(), str(path))
        for node in _import_time(tree.body):
            if isinstance(node, ast.Constant):
                continue
            for module in _required_imports(node):
                provided_by = _providers().get(module, set())
                if provided_by & extra_only and not provided_by & core_declared:
                    found.setdefault(module, str(path.relative_to(member)))
    return found


@pytest.mark.parametrize("member", MEMBERS, ids=lambda m: m.name)
def test_every_imported_library_is_declared_and_installed(member: Path) -> None:
    pyproject = f"{member.name}/pyproject.toml"
    problems = (
        [
            f"{member.name}: {source} imports {module}, which {pyproject} does not declare"
            for module, source in _undeclared(member).items()
        ]
        + [
            f"{member.name}: {source} imports {module}, which no installed distribution"
            f" provides: declare it in {pyproject} and install it (uv lock, uv sync)"
            for module, source in _untraceable(member).items()
        ]
        + [
            f"{member.name}: {source} imports {module} when the package is imported, but only "
            f"an extra of {pyproject} declares it: import it where it is used, or declare it "
            "in dependencies"
            for module, source in _extra_only_in_core(member).items()
        ]
    )
    assert not problems, problems


def test_an_undeclared_import_is_found_and_an_optional_one_is_not(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "acme"\ndependencies = ["fsspec>=2023.1"]\n'
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "acme.py").write_text(
        "import fsspec\n"
        "def proxies():\n"
        "    import requests.utils\n"
        "try:\n"
        "    import yaml\n"
        "except ImportError:\n"
        "    yaml = None\n"
    )
    found = _undeclared(tmp_path)
    assert found == {"requests": "src/acme.py"}


def _package(tmp_path: Path, source: str) -> Path:
    """A distribution ``acme`` under ``tmp_path`` that requires fsspec, with ``source``."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "acme"\ndependencies = ["fsspec>=2023.1"]\n'
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "acme.py").write_text(source)
    return tmp_path


def test_a_library_imported_by_its_name_in_a_string_is_found(tmp_path: Path) -> None:
    member = _package(
        tmp_path,
        "import importlib\n"
        "from importlib import import_module\n"
        "from torchx.schedulers._errors import require\n"
        "def clients(name):\n"
        "    importlib.import_module('requests.adapters')\n"
        "    import_module('yaml')\n"
        "    require('docker', scheduler='docker', extra='docker')\n"
        "    importlib.import_module('fsspec.implementations')\n"  # declared
        "    importlib.import_module('.sub', __package__)\n"  # its own module
        "    importlib.import_module(name)\n",  # only known at run time
    )
    assert _undeclared(member) == {
        "requests": "src/acme.py",
        "yaml": "src/acme.py",
        "docker": "src/acme.py",
    }


def test_an_import_error_handler_that_raises_makes_the_import_required(tmp_path: Path) -> None:
    member = _package(
        tmp_path,
        "try:\n"
        "    import yaml\n"
        "except ImportError as e:\n"
        "    raise RuntimeError('acme needs pyyaml') from e\n"
        "def fetch():\n"
        "    try:\n"
        "        import requests\n"
        "    except ImportError:\n"  # a fallback that raises only on its own failure
        "        try:\n"
        "            return open('x')\n"
        "        except OSError:\n"
        "            raise ValueError('x') from None\n"
        "    return requests\n",
    )
    assert _undeclared(member) == {"yaml": "src/acme.py"}


def test_a_library_no_installed_distribution_provides_fails(tmp_path: Path) -> None:
    member = _package(
        tmp_path,
        "import fsspec\nimport acme_lib_installed_nowhere.sub\n",
    )
    assert _untraceable(member) == {"acme_lib_installed_nowhere": "src/acme.py"}
    assert _undeclared(member) == {}  # it cannot be traced to a distribution: not here


def test_a_library_only_an_extra_declares_is_found_where_the_core_imports_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "acme"\ndependencies = ["fsspec>=2023.1"]\n'
        '[project.optional-dependencies]\nyaml = ["pyyaml>=6"]\nweb = ["requests"]\n'
    )
    pkg = tmp_path / "src" / "acme"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "from acme import _fmt\n"
        "from ._web import fetch\n"
        "__all__ = ['Report', 'fetch']\n"
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n"
        "    from acme._report import Report\n"  # a public name loaded lazily
        "def __getattr__(name):\n"
        "    from acme import _report\n"
        "    return getattr(_report, name)\n"
    )
    (pkg / "_fmt.py").write_text("import fsspec\nimport yaml\n")  # core: yaml breaks it
    (pkg / "_web.py").write_text(
        "def fetch():\n    import requests\n"  # used only when called: fine
        "try:\n    import requests as _r\nexcept ImportError:\n    _r = None\n"  # optional
    )
    (pkg / "_report.py").write_text("TABLE = 'acme._yaml_out:dump'\nclass Report: ...\n")
    (pkg / "_yaml_out.py").write_text("import yaml.representer\n")  # loaded by its name
    (pkg / "cli_yaml.py").write_text("import yaml\n")  # imported by no core module: fine
    assert _undeclared(tmp_path) == {}
    assert _extra_only_in_core(tmp_path) == {"yaml": "src/acme/_fmt.py"}
    (pkg / "_fmt.py").write_text("import fsspec\n")
    assert _extra_only_in_core(tmp_path) == {"yaml": "src/acme/_yaml_out.py"}
    (pkg / "_report.py").write_text("class Report: ...\n")
    assert _extra_only_in_core(tmp_path) == {}
    # declared in dependencies as well as in an extra: the core may import it
    (pkg / "_fmt.py").write_text("import yaml\n")
    text = (tmp_path / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(text.replace('"fsspec>=2023.1"', '"fsspec", "pyyaml"'))
    assert _extra_only_in_core(tmp_path) == {}
