"""A function's source as it runs: with the docstring the function has now.

A builtin component's docstring is completed when its module runs (the help of the
arguments builtins share is written once and filled in), so the text in the file lacks
lines that ``help()`` and ``torchx run NAME --help`` show. The source printed as a
template to copy (``torchx builtins --print``) shows the docstring the function has.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any


def function_source(fn: Callable[..., Any]) -> str:
    """``inspect.getsource(fn)`` with its docstring literal replaced by ``fn.__doc__`` where
    the two differ; the source as it is otherwise (no docstring, or the same one)."""
    source = inspect.getsource(fn)
    doc = inspect.getdoc(fn)
    lines = source.splitlines(keepends=True)
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
    plain = dedented.splitlines()
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
    text = doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').splitlines()
    body = [f'{indent}"""{text[0]}', *(f"{indent}{line}" if line else "" for line in text[1:])]
    return "\n".join([*body, f'{indent}"""{comment}']) + "\n"
