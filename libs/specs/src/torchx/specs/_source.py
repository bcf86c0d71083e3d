"""A component's source as a template to copy: a file that runs on its own.

A builtin component's docstring is completed when its module runs (the help of the
arguments builtins share is written once and filled in), so the text in the file lacks
lines that ``help()`` and ``torchx run NAME --help`` show: the printed function has the
docstring it has now. Its code may also call helpers private to its module; a template
that names them without defining them fails with a NameError once copied, so the private
definitions it needs come with it, and the imports it needs come before it. Where a name
it needs cannot be found for certain (a ``from x import *``, a name set through
``globals()``), the template is pytorch/torchx 0.7's instead: every import of the module,
then the function.
"""

from __future__ import annotations

import ast
import builtins
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
    name of an importable module is imported from that module. A name that statements at
    the top bind more than once, or inside an ``if``/``try``/``with``/loop, comes with
    every one of those statements, whole. A function that is not defined once at the top
    of its module, or that needs a name found nowhere, gets every import of the module,
    as written (``_every_import``)."""
    home = _Module(sys.modules[fn.__module__], rank=sys.maxsize)
    defs = home.bound.get(fn.__name__, [])
    node = defs[0] if len(defs) == 1 else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _every_import(home, fn)
    modules = [home]
    pieces: dict[tuple[int, int], str] = {(sys.maxsize, node.lineno): function_source(fn)}
    imported: dict[tuple[str, str], list[str]] = {}  # ("from"/"import", module): names
    todo: list[tuple[_Module, set[str]]] = [(home, _free_names(node))]
    while todo:
        module, names = todo.pop()
        for name in sorted(names - ({fn.__name__} if module is home else set())):
            found = _resolve(module, name, modules)
            if found is None:
                if name in _EVERY_MODULE_HAS:
                    continue
                return _every_import(home, fn)  # bound in a way not seen here
            where, stmts = found
            if isinstance(stmts, tuple):  # an import: (kind, module, name as written)
                kind, source, written = stmts
                if written not in imported.setdefault((kind, source), []):
                    imported[(kind, source)].append(written)
                continue
            for stmt in stmts:
                key = (where.rank, stmt.lineno)
                if key not in pieces:
                    pieces[key] = where.text_of(stmt)
                    todo.append((where, _free_names(stmt)))
    future = ["from __future__ import annotations", ""] if any(m.future for m in modules) else []
    head = list(future)
    for (kind, source), aliases in sorted(imported.items(), key=_plain_first):
        if head and head[-1] and _section(source) != _section(head[-1].split()[1]):
            head.append("")  # a blank line between sections, as isort keeps them
        head.append(_import_line(kind, source, aliases))
    body = [text.rstrip("\n") for _, text in sorted(pieces.items())]
    return ("\n".join(head) + "\n\n\n" if head else "") + "\n\n\n".join(body) + "\n"


# names every module has without binding them: the builtins and its own dunders
_EVERY_MODULE_HAS = frozenset(vars(builtins)) | {"__file__", "__builtins__", "__cached__"}


def _every_import(home: _Module, fn: Callable[..., Any]) -> str:
    """pytorch/torchx 0.7's template: every import at the top of ``fn``'s module, then
    ``fn``: what runs wherever the module's own code could run."""
    imports = [s for s in home.tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    text = [ast.get_source_segment(home.source, s) or "" for s in imports]
    return "\n".join([*text, "", "", function_source(fn)])


class _Module:
    """A module's source, parsed, with the top-level statements that bind each name (in
    the order they are written; a statement such as ``if`` or ``try`` for a name bound
    inside it)."""

    def __init__(self, module: types.ModuleType, rank: int) -> None:
        self.name = module.__name__
        self.rank = rank  # where its pieces go in a template: those it needs go first
        self.source = inspect.getsource(module)
        self.lines = self.source.split("\n")
        self.tree = ast.parse(self.source)
        self.importable = _importable(module)
        self.future = False
        self.bound: dict[str, list[ast.stmt]] = {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                self.future = True
                continue
            for name in _binds(stmt):
                stmts = self.bound.setdefault(name, [])
                if not stmts or stmts[-1] is not stmt:
                    stmts.append(stmt)

    def text_of(self, stmt: ast.stmt) -> str:
        """The lines of ``stmt``, with its decorators and the comment right above it."""
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        while start > 1 and self.lines[start - 2].startswith("#"):
            start -= 1
        return "\n".join(self.lines[start - 1 : stmt.end_lineno])


def _resolve(
    module: _Module, name: str, modules: list[_Module]
) -> tuple[_Module, list[ast.stmt] | tuple[str, str, str]] | None:
    """Where ``name`` of ``module`` comes from in a template: the statements to copy, or
    an import; None for a name the module does not bind (a builtin, say)."""
    stmts = module.bound.get(name)
    if stmts is None:
        return None
    stmt = stmts[0]
    if len(stmts) == 1 and isinstance(stmt, ast.Import):
        alias = next(a for a in stmt.names if (a.asname or a.name.partition(".")[0]) == name)
        return module, ("import", alias.name, _as(alias))
    if len(stmts) == 1 and isinstance(stmt, ast.ImportFrom):
        alias = next(a for a in stmt.names if (a.asname or a.name) == name)
        source = "." * stmt.level + (stmt.module or "")
        private = (
            stmt.level == 0 and bool(stmt.module) and _unpromised(stmt.module or "", alias.name)
        )
        home = _public_home(stmt.module or "", alias.name) if private else None
        if home is not None:
            # a private module's name its public package exports: imported from there
            return module, ("from", home, _as(alias))
        if (alias.name.startswith("_") or private) and stmt.level == 0 and stmt.module:
            # another module's private definition, or any of a private module (whose names
            # may change without notice): copied as that module has it
            other = next((m for m in modules if m.name == stmt.module), None)
            if other is None:
                # found later, needed by those found before: its pieces go above theirs
                other = _Module(importlib.import_module(stmt.module), rank=-len(modules))
                modules.append(other)
            if alias.name in other.bound and alias.asname is None:
                return _resolve(other, alias.name, modules)
        return module, ("from", source, _as(alias))
    if module.importable and not _unpromised(module.name, name):
        return module, ("from", module.name, name)
    return module, stmts


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def _unpromised(module: str, name: str) -> bool:
    """Whether ``name`` of ``module`` may change without notice: a private name, any name
    of a private module, or a torchx name its module does not list in ``__all__``."""
    if name.startswith("_") or _is_private(module):
        return True
    listed = getattr(importlib.import_module(module), "__all__", ())
    return module.split(".")[0] == "torchx" and name not in listed


def _public_home(module: str, name: str) -> str | None:
    """The nearest public package above ``module`` that lists ``name`` in its ``__all__``
    as the same object, or None."""
    parts = module.split(".")
    for end in range(len(parts) - 1, 0, -1):
        package = ".".join(parts[:end])
        if _is_private(package):
            continue
        public = importlib.import_module(package)
        if name in getattr(public, "__all__", ()) and getattr(public, name, None) is getattr(
            importlib.import_module(module), name, object()
        ):
            return package
    return None


def _as(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def _plain_first(item: tuple[tuple[str, str], list[str]]) -> tuple[int, bool, str]:
    """isort's order: by section, then ``import x`` lines before ``from x import y``
    lines, each by module."""
    (kind, module), _ = item
    return _section(module), kind != "import", module


def _section(module: str) -> int:
    """isort's section: 0 for the standard library and others, 1 torchx, 2 relative."""
    if module.startswith("."):
        return 2
    return int(module.split(".")[0] == "torchx")


def _by_type(name: str) -> tuple[int, str]:
    """isort's order of imported names: constants, then classes, then the rest."""
    bare = name.split()[0]
    kind = 0 if bare.isupper() and len(bare) > 1 else 1 if bare[:1].isupper() else 2
    return kind, bare.lower()


# The longest import line written whole: the project's line length, which the definitions
# copied beside it keep, so the template is one width throughout.
_LINE_LENGTH = 100


def _import_line(kind: str, module: str, names: list[str]) -> str:
    if kind == "import":
        return "\n".join(f"import {name}" for name in names)
    names = sorted(names, key=_by_type)
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= _LINE_LENGTH:
        return line
    return "\n".join([f"from {module} import (", *(f"    {n}," for n in names), ")"])


def _binds(node: ast.AST) -> Iterator[str]:
    """The module-level names ``node`` (a top-level statement, or a part of one) binds:
    those it assigns, defines or imports, in its ``if``/``try``/``with``/loop bodies too,
    never those local to a function, class, lambda or comprehension within."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield alias.asname or alias.name.partition(".")[0]
    elif isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Store):
            yield node.id
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        yield node.name  # a ``case`` pattern's capture
    elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp)) and not (
        isinstance(node, ast.GeneratorExp)
    ):
        for child in ast.iter_child_nodes(node):
            yield from _binds(child)


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
        elif isinstance(node, _NAMED) and node.name:  # a nested def, ``except E as e``, ...
            own.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            own.add(node.rest)
    return read - own


# the nodes whose ``name`` is a name they bind (3.12's type parameters too)
_NAMED: tuple[type[Any], ...] = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
    *(
        getattr(ast, kind)
        for kind in ("TypeVar", "ParamSpec", "TypeVarTuple")
        if hasattr(ast, kind)
    ),
)


def _importable(module: types.ModuleType) -> bool:
    """Whether ``import`` finds ``module`` again by its name: not so for a file loaded by
    its path (a ``./file.py:fn`` component), whose public names are then copied too."""
    parent, _, _ = module.__name__.rpartition(".")
    path = getattr(sys.modules.get(parent), "__path__", None) if parent else None
    if parent and path is None:
        return False
    spec = importlib.machinery.PathFinder.find_spec(module.__name__, path)
    return spec is not None and spec.origin == getattr(module, "__file__", None)
