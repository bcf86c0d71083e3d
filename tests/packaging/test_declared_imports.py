"""Every library a distribution's code imports is one it declares (or the import is optional).

tools/check_imports.py rules the imports between torchx's own distributions; this covers the
others: an import that works here only because another distribution of the workspace pulled
the library in fails for a user who installs that one distribution.
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
    for handler in node.handlers:
        caught = handler.type
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        if any(isinstance(n, ast.Name) and n.id in _OPTIONAL for n in names):
            return True
    return False


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
    for child in ast.iter_child_nodes(node):
        yield from _required_imports(child)


def _undeclared(member: Path) -> dict[str, str]:
    """Each imported library no requirement of ``member`` provides, with a file importing it."""
    declared = _declared(member)
    undeclared: dict[str, str] = {}
    for source in sorted((member / "src").rglob("*.py")):
        for module in _required_imports(ast.parse(source.read_text(), str(source))):
            if module in sys.stdlib_module_names or module == "torchx":
                continue
            # A library not installed here cannot be traced to a distribution.
            provided_by = _providers().get(module, set())
            if provided_by and not provided_by & declared:
                undeclared.setdefault(module, str(source.relative_to(member)))
    return undeclared


@pytest.mark.parametrize("member", MEMBERS, ids=lambda m: m.name)
def test_every_imported_library_is_declared(member: Path) -> None:
    assert _undeclared(member) == {}


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
