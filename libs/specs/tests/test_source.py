"""A component's printed source shows the docstring the function has when it runs."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path
from typing import Any

from torchx.specs._source import function_source


def _load(tmp_path: Path, source: str) -> Any:
    path = tmp_path / "comp.py"
    path.write_text(textwrap.dedent(source))
    namespace: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # getsource reads the file
    return namespace


def test_a_function_whose_docstring_is_as_written_prints_as_written(tmp_path: Path) -> None:
    ns = _load(
        tmp_path,
        '''
        def plain(x: int = 1):
            """Runs. \\\\ stays "as" written.

            Args:
                x: a number
            """
            return x

        def one_line(): "doc"; return 1
        ''',
    )
    for fn in (ns["plain"], ns["one_line"]):
        assert function_source(fn) == inspect.getsource(fn)
    ns["one_line"].__doc__ = "changed"  # its literal shares a line: left as written
    assert function_source(ns["one_line"]) == inspect.getsource(ns["one_line"])


def test_a_completed_docstring_replaces_the_written_one_and_nothing_else(tmp_path: Path) -> None:
    ns = _load(
        tmp_path,
        '''
        def comp(path: str, cpu: float = -1) -> "AppDef":
            """Copies a file.

            Args:
                path: the file
            """  # the shared lines are added below
            return path
        ''',
    )
    comp = ns["comp"]
    doc = 'Copies a file, \\ and """ too.\n\nArgs:\n    path: the file\n    cpu: cores per replica'
    comp.__doc__ = doc
    printed = function_source(comp)
    (node,) = ast.parse(printed).body
    assert isinstance(node, ast.FunctionDef)
    assert ast.get_docstring(node) == doc
    assert printed.startswith("def comp(path: str, cpu: float = -1)")
    assert printed.endswith("    return path\n")
    assert '    """  # the shared lines are added below\n    return path\n' in printed
