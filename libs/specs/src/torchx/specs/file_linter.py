"""Static checks of a component function in a Python file, and its docstring as help text.

pytorch/torchx's ``torchx.specs.file_linter``: ``validate(path, fn_name)`` reads the file
without running it and lists what keeps the function from being a component.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from torchx.specs._docstring import parse_docstring

_SCALARS = {"str", "int", "float", "bool"}
_CONTAINERS = {"List", "list", "Dict", "dict", "Optional"}


@dataclass
class LinterMessage:
    """One problem: what is wrong (``description``) and where (``line``, ``char``)."""

    name: str
    description: str
    line: int
    char: int
    severity: str = "error"


def get_fn_docstring(fn: Callable[..., object]) -> tuple[str, dict[str, str]]:
    """The function's description and the help of each argument, from its docstring.

    Without a docstring the description says how to add one and each argument's help is
    a blank, so the help printer still lists every argument.
    """
    args_help = dict.fromkeys(inspect.signature(fn).parameters, " ")
    doc = parse_docstring(inspect.getdoc(fn))
    for name, text in doc.args.items():
        if name in args_help and text:
            args_help[name] = text
    name = getattr(fn, "__name__", "component")
    if not doc.summary:
        return (
            f"{name}: write a docstring (a summary and an Args: section) to describe it",
            args_help,
        )
    description = doc.summary + (f"\n{doc.description}" if doc.description else "")
    return description, args_help


def _annotation_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _annotation_name(node.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rpartition(".")[2].partition("[")[0]
    if isinstance(node, ast.BinOp):  # ``X | None``
        return "Optional"
    return ""


def _check_function(fn: ast.FunctionDef) -> list[LinterMessage]:
    problems: list[LinterMessage] = []

    def problem(text: str, node: ast.AST) -> None:
        problems.append(
            LinterMessage("TorchxFunctionValidator", text, getattr(node, "lineno", fn.lineno), 0)
        )

    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    if fn.args.vararg is not None:
        params.append(fn.args.vararg)
    for arg in params:
        if arg.annotation is None:
            problem(f"argument {arg.arg!r} of {fn.name} has no type annotation", arg)
            continue
        kind = _annotation_name(arg.annotation)
        if kind not in _SCALARS | _CONTAINERS:
            problem(
                f"argument {arg.arg!r} of {fn.name} is {kind or 'an unsupported type'}; use str, "
                "int, float, bool, List/Dict of those, or Optional of any of them",
                arg,
            )
    if fn.args.kwarg is not None:
        problem(f"**{fn.args.kwarg.arg} of {fn.name} cannot be given on a command line", fn)
    if fn.returns is None:
        problem(f"{fn.name} has no return annotation; annotate it `-> AppDef`", fn)
    elif _annotation_name(fn.returns) != "AppDef":
        problem(f"{fn.name} returns {ast.unparse(fn.returns)}; a component returns AppDef", fn)
    return problems


def validate(path: str, component_function: str) -> list[LinterMessage]:
    """What keeps ``component_function`` in file ``path`` from being a component.

    Every argument must be annotated with a type the command line can express and the
    function must be annotated to return ``AppDef``. The file is parsed, not run.
    """
    source = Path(path).read_text()
    try:
        module = ast.parse(source, filename=path)
    except SyntaxError as e:
        return [LinterMessage("TorchxValidator", e.msg, e.lineno or 0, e.offset or 0)]
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == component_function:
            return _check_function(node)
    return [
        LinterMessage(
            "TorchxValidator",
            f"{path} defines no function {component_function!r}",
            0,
            0,
        )
    ]


__all__ = ["LinterMessage", "get_fn_docstring", "validate"]
