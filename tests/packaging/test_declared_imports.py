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

Limit: a distribution's extras count as declared, like its ``dependencies``. So a library
that only an extra declares passes even where it is imported unconditionally; telling the two
apart would need each import classed as core or extra, a larger change than this check.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
from collections.abc import Iterator
from pathlib import Path

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


def _declared(member: Path) -> set[str]:
    """The distributions ``member`` requires, in any of its extras too."""
    project = tomllib.loads((member / "pyproject.toml").read_text())["project"]
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    return {_normal(re.split(r"[\s<>=!~;\[@]", r, maxsplit=1)[0]) for r in requirements}


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


@pytest.mark.parametrize("member", MEMBERS, ids=lambda m: m.name)
def test_every_imported_library_is_declared_and_installed(member: Path) -> None:
    pyproject = f"{member.name}/pyproject.toml"
    problems = [
        f"{member.name}: {source} imports {module}, which {pyproject} does not declare"
        for module, source in _undeclared(member).items()
    ] + [
        f"{member.name}: {source} imports {module}, which no installed distribution"
        f" provides: declare it in {pyproject} and install it (uv lock, uv sync)"
        for module, source in _untraceable(member).items()
    ]
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
