"""A component's printed source shows the docstring the function has when it runs."""

from __future__ import annotations

import ast
import inspect
import os
import runpy
import textwrap
from pathlib import Path
from typing import Any

from torchx.specs._source import function_source, template_source


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


def test_only_a_newline_ends_a_line_of_the_written_docstring(tmp_path: Path) -> None:
    # a form feed and U+2028 are line breaks to str.splitlines, not to Python's parser
    for odd in ("\x0c", "\u2028"):
        ns = _load(
            tmp_path,
            f'''
            def comp(x: int = 1):
                """Runs{odd} here.

                Args:
                    x: a number{odd}

                """
                return x
            ''',
        )
        ns["comp"].__doc__ = "Runs.\n\nArgs:\n    x: a number\n    y: more"
        (node,) = ast.parse(function_source(ns["comp"])).body
        assert isinstance(node, ast.FunctionDef)
        assert ast.get_docstring(node) == ns["comp"].__doc__
        assert ast.unparse(node.body[1]) == "return x"


def test_a_replaced_one_line_docstring_stays_on_one_line(tmp_path: Path) -> None:
    ns = _load(tmp_path, 'def comp():\n    """Old."""\n    return 1\n')
    for doc, literal in (("New.", '"""New."""'), ('Ends "x"', '"""Ends "x\\""""')):
        ns["comp"].__doc__ = doc
        printed = function_source(ns["comp"])
        assert printed == f"def comp():\n    {literal}\n    return 1\n"
        (node,) = ast.parse(printed).body
        assert isinstance(node, ast.FunctionDef) and ast.get_docstring(node) == doc


def test_a_template_brings_the_imports_and_private_helpers_it_needs(tmp_path: Path) -> None:
    import importlib.util
    import sys

    path = tmp_path / "mycomps.py"
    path.write_text(
        textwrap.dedent(
            '''
            """A module of components."""

            from __future__ import annotations

            import os
            import shlex as quoting
            from collections import OrderedDict, deque

            # the greeting
            _HELLO = "hello"
            PUBLIC = "shared"


            def _word(x: str) -> str:
                return quoting.quote(x) + os.sep


            def comp(msg: str = _HELLO) -> OrderedDict[str, str]:
                """Greets."""
                return OrderedDict(greeting=_word(msg) + PUBLIC)


            def unrelated() -> deque[int]:
                return deque()
            '''
        )
    )
    spec = importlib.util.spec_from_file_location("mycomps", path)
    assert spec is not None and spec.loader is not None

    def load() -> Any:
        module = importlib.util.module_from_spec(spec)
        sys.modules["mycomps"] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return module

    def run(text: str) -> None:
        namespace: dict[str, Any] = {}
        exec(compile(text, "template.py", "exec"), namespace)
        assert namespace["comp"]() == {"greeting": f"hello{os.sep}shared"}
        assert namespace["comp"].__doc__ == "Greets."

    sys.path.insert(0, str(tmp_path))
    try:
        importable = template_source(load().comp)
        run(importable)
        sys.path.remove(str(tmp_path))
        # loaded from its path only, as a ./file.py:fn component is: PUBLIC is copied too
        by_path = template_source(load().comp)
        sys.modules.pop("mycomps")
        run(by_path)
    finally:
        sys.modules.pop("mycomps", None)
        if str(tmp_path) in sys.path:
            sys.path.remove(str(tmp_path))
    head = (
        "from __future__ import annotations\n\n"
        "import os\nimport shlex as quoting\nfrom collections import OrderedDict\n"
    )
    assert importable.startswith(head + "from mycomps import PUBLIC\n\n\n# the greeting\n")
    assert by_path.startswith(head + "\n\n# the greeting\n_HELLO =")
    assert 'PUBLIC = "shared"\n' in by_path and "PUBLIC =" not in importable
    assert "deque" not in importable and "unrelated" not in by_path
    for text in (importable, by_path):
        assert text.index("def _word(") < text.index("def comp(")


def test_a_template_of_a_function_that_needs_nothing_is_the_function(tmp_path: Path) -> None:
    import importlib.util
    import sys

    path = tmp_path / "bare.py"
    path.write_text(
        'import os\n\n\ndef comp(x: int = 1) -> int:\n    """Doubles."""\n    return 2 * x\n'
    )
    spec = importlib.util.spec_from_file_location("bare_components", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bare_components"] = module
    try:
        spec.loader.exec_module(module)
        assert template_source(module.comp) == path.read_text().partition("\n\n\n")[2]
    finally:
        del sys.modules["bare_components"]


def _template_of_file(tmp_path: Path, source: str) -> tuple[str, str]:
    """``get_builtin_source`` of ``comp`` in a ./file.py, and the first argument of the
    app that the template's ``comp()`` returns."""
    from torchx.specs.finder import get_builtin_source

    path = tmp_path / "bound.py"
    path.write_text(textwrap.dedent(source))
    text = get_builtin_source(f"{path}:comp")
    copy = tmp_path / "template.py"
    copy.write_text(text)
    return text, runpy.run_path(str(copy))["comp"]().roles[0].args[0]


def test_a_template_has_every_statement_that_binds_a_name_it_needs(tmp_path: Path) -> None:
    text, made = _template_of_file(
        tmp_path,
        '''
        import sys
        from torchx.specs import AppDef, Role

        _BASE = ["a"]
        _UNUSED = 1
        _BASE += ["b"]
        try:
            import json as _json
        except ImportError:
            _json = None
        if sys.version_info >= (3,):
            _COND = 3
        else:
            _COND = 2
        with open(__file__) as _f:
            _FIRST = _f.readline()
        for _k in ("x",):
            _LAST = _k
        match _COND:
            case 3 as _CASE:
                pass


        def comp() -> AppDef:
            """Joins."""
            try:
                pass
            except ValueError as e:
                print(e)

            def inner() -> str:
                return _json.dumps([*_BASE, _COND, _LAST, _CASE, _FIRST])

            return AppDef("a", [Role("a", "i", entrypoint="echo", args=[inner()])])
        ''',
    )
    # _FIRST is the copy's own first line: the template runs as a file of its own
    assert made == '["a", "b", 3, "x", 3, "import sys\\n"]'
    assert text.index('_BASE = ["a"]') < text.index('_BASE += ["b"]') < text.index("def comp(")
    assert "try:\n    import json as _json\nexcept ImportError:" in text
    assert "_UNUSED" not in text


def test_a_name_the_template_cannot_find_gives_every_import_and_the_function(
    tmp_path: Path,
) -> None:
    text, made = _template_of_file(
        tmp_path,
        '''
        from os.path import *
        import shlex
        from torchx.specs import AppDef, Role

        _UNUSED = 1


        def comp() -> AppDef:
            """Joins."""
            return AppDef("a", [Role("a", "i", entrypoint="echo", args=[join("a", "b")])])
        ''',
    )
    assert text.startswith("from os.path import *\nimport shlex\nfrom torchx.specs import")
    assert "_UNUSED" not in text and made == os.path.join("a", "b")
