"""Static checks of a component function in a Python file, and its docstring as help text.

pytorch/torchx's ``torchx.specs.file_linter``: ``validate(path, fn_name)`` reads the file
without running it and lists what keeps the function from being a component.
"""

from __future__ import annotations

import abc
import argparse
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


class TorchxFunctionValidator(abc.ABC):
    """One rule a component function must follow, checked on its parsed definition."""

    @abc.abstractmethod
    def validate(self, app_specs_func_def: ast.FunctionDef) -> list[LinterMessage]:
        """The problems ``app_specs_func_def`` has under this rule (empty when none)."""

    def _gen_linter_message(self, description: str, lineno: int) -> LinterMessage:
        return LinterMessage(type(self).__name__, description, lineno, 0)


class TorchxFunctionArgsValidator(TorchxFunctionValidator):
    """Every argument is annotated with a type a command line can give: str, int, float,
    bool, List/Dict of those, or Optional of any of them; no ``**kwargs``."""

    def validate(self, app_specs_func_def: ast.FunctionDef) -> list[LinterMessage]:
        fn = app_specs_func_def
        problems: list[LinterMessage] = []
        params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        if fn.args.vararg is not None:
            params.append(fn.args.vararg)
        for arg in params:
            if arg.annotation is None:
                problems.append(
                    self._gen_linter_message(
                        f"argument {arg.arg!r} of {fn.name} has no type annotation", arg.lineno
                    )
                )
                continue
            kind = _annotation_name(arg.annotation)
            if kind not in _SCALARS | _CONTAINERS:
                problems.append(
                    self._gen_linter_message(
                        f"argument {arg.arg!r} of {fn.name} is {kind or 'an unsupported type'}; "
                        "use str, int, float, bool, List/Dict of those, or Optional of any "
                        "of them",
                        arg.lineno,
                    )
                )
        if fn.args.kwarg is not None:
            problems.append(
                self._gen_linter_message(
                    f"**{fn.args.kwarg.arg} of {fn.name} cannot be given on a command line",
                    fn.lineno,
                )
            )
        return problems


class TorchxReturnValidator(TorchxFunctionValidator):
    """The function is annotated to return ``AppDef``."""

    def validate(self, app_specs_func_def: ast.FunctionDef) -> list[LinterMessage]:
        fn = app_specs_func_def
        if fn.returns is None:
            text = f"{fn.name} has no return annotation; annotate it `-> AppDef`"
        elif _annotation_name(fn.returns) != "AppDef":
            text = f"{fn.name} returns {ast.unparse(fn.returns)}; a component returns AppDef"
        else:
            return []
        return [self._gen_linter_message(text, fn.lineno)]


class TorchFunctionVisitor(ast.NodeVisitor):
    """Finds the top-level function ``component_function_name`` and runs ``validators``
    (the argument and return rules) on it; their findings collect in ``linter_errors``."""

    def __init__(self, component_function_name: str) -> None:
        self.component_function_name = component_function_name
        self.validators: list[TorchxFunctionValidator] = [
            TorchxFunctionArgsValidator(),
            TorchxReturnValidator(),
        ]
        self.linter_errors: list[LinterMessage] = []
        self.visited_function = False

    def visit_Module(self, node: ast.Module) -> None:
        # Only module-level definitions are components; nested ones are not looked at.
        for child in node.body:
            if isinstance(child, ast.FunctionDef):
                self.visit_FunctionDef(child)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name != self.component_function_name:
            return
        self.visited_function = True
        for validator in self.validators:
            self.linter_errors += validator.validate(node)


class TorchXArgumentHelpFormatter(
    argparse.RawDescriptionHelpFormatter,
    argparse.ArgumentDefaultsHelpFormatter,
    argparse.MetavarTypeHelpFormatter,
):
    """argparse help for component arguments: each argument's help ends in
    ``(required)`` or ``(default: VALUE)``."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is argparse.SUPPRESS:
            return text
        return text + (" (required)" if action.required else f" (default: {action.default})")


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
    visitor = TorchFunctionVisitor(component_function)
    visitor.visit(module)
    if not visitor.visited_function:
        return [
            LinterMessage(
                "TorchxValidator",
                f"{path} defines no function {component_function!r}",
                0,
                0,
            )
        ]
    return visitor.linter_errors


__all__ = [
    "LinterMessage",
    "TorchFunctionVisitor",
    "TorchXArgumentHelpFormatter",
    "TorchxFunctionArgsValidator",
    "TorchxFunctionValidator",
    "TorchxReturnValidator",
    "get_fn_docstring",
    "validate",
]
