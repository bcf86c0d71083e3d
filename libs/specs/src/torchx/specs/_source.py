"""A component's source as a template to copy: a file that runs on its own.

A builtin component's docstring is completed when its module runs (the help of the
arguments builtins share is written once and filled in), so the text in the file lacks
lines that ``help()`` and ``torchx run NAME --help`` show: the printed function has the
docstring it has now. Its code may also call helpers private to its module; a template
that names them without defining them fails with a NameError once copied, so the private
definitions it needs come with it, and the imports it needs come before it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import inspect
import io
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from typing import Any


def function_source(fn: Callable[..., Any]) -> str:
    """``inspect.getsource(fn)`` with its docstring literal replaced by ``fn.__doc__`` where
    the two differ; the source as it is otherwise (no docstring, or the same one)."""
    source = inspect.getsource(fn)
    doc = inspect.getdoc(fn)
    # only "\n" ends a line, as for ast's line numbers: str.splitlines also splits at a
    # form feed or U+2028 that a docstring may hold
    lines = io.StringIO(source).readlines()
    dedented = textwrap.dedent(source)
    node = ast.parse(dedented).body[0]
    if not doc or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return source
    first = node.body[0]
    if not (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and first.end_lineno is not None
        and first.end_col_offset is not None
    ):
        return source
    if inspect.cleandoc(first.value.value) == doc:
        return source
    plain = dedented.split("\n")
    before = plain[first.lineno - 1][: first.col_offset]
    # offsets count UTF-8 bytes
    after = plain[first.end_lineno - 1].encode()[first.end_col_offset :].decode().strip()
    if before.strip() or (after and not after.startswith("#")):
        return source  # the literal shares its lines with other code: leave it as written
    opening = lines[first.lineno - 1]
    indent = opening[: len(opening) - len(opening.lstrip())]
    literal = _literal(doc, indent, f"  {after}" if after else "")
    return "".join([*lines[: first.lineno - 1], literal, *lines[first.end_lineno :]])


def _literal(doc: str, indent: str, comment: str) -> str:
    """``doc`` as a triple-quoted literal indented by ``indent``, whose value cleans to it,
    and the comment that followed the one it replaces."""
    text = doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').split("\n")
    if len(text) == 1:  # closed on its line; an escaped last quote cannot merge with it
        one = text[0][:-1] + '\\"' if text[0].endswith('"') else text[0]
        return f'{indent}"""{one}"""{comment}\n'
    body = [f'{indent}"""{text[0]}', *(f"{indent}{line}" if line else "" for line in text[1:])]
    return "\n".join([*body, f'{indent}"""{comment}']) + "\n"


def template_source(fn: Callable[..., Any]) -> str:
    """``fn``'s source (``function_source``) as a file that defines it: the imports its code
    needs, then the definitions private to its module (``_name``, or a ``_name`` it imports
    from another module) that it uses, in the order they are written, then ``fn``. A public
    name of an importable module is imported from that module. A function that is not
    defined at the top of its module gets every import of the module, as written."""
    home = _Module(sys.modules[fn.__module__], rank=sys.maxsize)
    node = home.bound.get(fn.__name__)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        imports = [s for s in home.tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        text = [ast.get_source_segment(home.source, s) or "" for s in imports]
        return "\n".join([*text, "", "", function_source(fn)])
    modules = [home]
    pieces: dict[tuple[int, int], str] = {(sys.maxsize, node.lineno): function_source(fn)}
    imported: dict[tuple[str, str], list[str]] = {}  # ("from"/"import", module): names
    todo: list[tuple[_Module, set[str]]] = [(home, _free_names(node))]
    while todo:
        module, names = todo.pop()
        for name in sorted(names - ({fn.__name__} if module is home else set())):
            found = _resolve(module, name, modules)
            if found is None:
                continue
            where, stmt = found
            if isinstance(stmt, tuple):  # an import: (kind, module, name as written)
                kind, source, written = stmt
                if written not in imported.setdefault((kind, source), []):
                    imported[(kind, source)].append(written)
                continue
            key = (where.rank, stmt.lineno)
            if key not in pieces:
                pieces[key] = where.text_of(stmt)
                todo.append((where, _free_names(stmt)))
    future = ["from __future__ import annotations", ""] if any(m.future for m in modules) else []
    head = [
        *future,
        *(_import_line(k, m, n) for (k, m), n in sorted(imported.items(), key=_plain_first)),
    ]
    body = [text.rstrip("\n") for _, text in sorted(pieces.items())]
    return ("\n".join(head) + "\n\n\n" if head else "") + "\n\n\n".join(body) + "\n"


class _Module:
    """A module's source, parsed, with the statement that binds each top-level name."""

    def __init__(self, module: types.ModuleType, rank: int) -> None:
        self.name = module.__name__
        self.rank = rank  # where its pieces go in a template: those it needs go first
        self.source = inspect.getsource(module)
        self.lines = self.source.split("\n")
        self.tree = ast.parse(self.source)
        self.importable = _importable(module)
        self.future = False
        self.bound: dict[str, ast.stmt] = {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                self.future = True
                continue
            for name in _binds(stmt):
                self.bound[name] = stmt

    def text_of(self, stmt: ast.stmt) -> str:
        """The lines of ``stmt``, with its decorators and the comment right above it."""
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        while start > 1 and self.lines[start - 2].startswith("#"):
            start -= 1
        return "\n".join(self.lines[start - 1 : stmt.end_lineno])


def _resolve(
    module: _Module, name: str, modules: list[_Module]
) -> tuple[_Module, ast.stmt | tuple[str, str, str]] | None:
    """Where ``name`` of ``module`` comes from in a template: a definition to copy, or an
    import; None for a name the module does not bind (a builtin, say)."""
    stmt = module.bound.get(name)
    if stmt is None:
        return None
    if isinstance(stmt, ast.Import):
        alias = next(a for a in stmt.names if (a.asname or a.name.partition(".")[0]) == name)
        return module, ("import", alias.name, _as(alias))
    if isinstance(stmt, ast.ImportFrom):
        alias = next(a for a in stmt.names if (a.asname or a.name) == name)
        source = "." * stmt.level + (stmt.module or "")
        if alias.name.startswith("_") and stmt.level == 0 and stmt.module:
            # another module's private definition: copied as that module has it
            other = next((m for m in modules if m.name == stmt.module), None)
            if other is None:
                # found later, needed by those found before: its pieces go above theirs
                other = _Module(importlib.import_module(stmt.module), rank=-len(modules))
                modules.append(other)
            if alias.name in other.bound and alias.asname is None:
                return _resolve(other, alias.name, modules)
        return module, ("from", source, _as(alias))
    if not name.startswith("_") and module.importable:
        return module, ("from", module.name, name)
    return module, stmt


def _as(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def _plain_first(item: tuple[tuple[str, str], list[str]]) -> tuple[bool, str]:
    """``import x`` lines before ``from x import y`` lines, each by module."""
    (kind, module), _ = item
    return kind != "import", module


def _import_line(kind: str, module: str, names: list[str]) -> str:
    if kind == "import":
        return "\n".join(f"import {name}" for name in names)
    line = f"from {module} import {', '.join(sorted(names))}"
    if len(line) <= 88:
        return line
    return "\n".join([f"from {module} import (", *(f"    {n}," for n in sorted(names)), ")"])


def _binds(stmt: ast.stmt) -> Iterator[str]:
    """The top-level names ``stmt`` binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            yield alias.asname or alias.name.partition(".")[0]
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    yield node.id


def _free_names(stmt: ast.stmt) -> set[str]:
    """The names ``stmt`` reads and does not bind itself: those of its module it needs.
    A name bound anywhere inside counts as its own, which can only leave out a module
    name shadowed there; its annotations count, as the component's signature reads them."""
    read: set[str] = set()
    own: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else own).add(node.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            own.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
    return read - own


def _importable(module: types.ModuleType) -> bool:
    """Whether ``import`` finds ``module`` again by its name: not so for a file loaded by
    its path (a ``./file.py:fn`` component), whose public names are then copied too."""
    parent, _, _ = module.__name__.rpartition(".")
    path = getattr(sys.modules.get(parent), "__path__", None) if parent else None
    if parent and path is None:
        return False
    spec = importlib.machinery.PathFinder.find_spec(module.__name__, path)
    return spec is not None and spec.origin == getattr(module, "__file__", None)
