"""Component introspection.

A component is a typed function that returns an AppDef. Its signature and Google-style
docstring give an argument schema: what ``torchx run COMPONENT --help`` shows, and what
turns a list of command-line strings into the typed call of the function.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import argparse

from torchx.specs._app import AppDef
from torchx.specs._docstring import parse_docstring
from torchx.specs._errors import SpecsError, closest


class _Required:
    def __repr__(self) -> str:
        return "<required>"


# The default of a component argument the user must give. Not ``specs.MISSING`` (a plain
# string, as in pytorch/torchx) so that no string default is ever mistaken for it.
REQUIRED: Any = _Required()

_SCALARS: dict[type, str] = {str: "str", int: "int", float: "float", bool: "bool"}
_TRUE = {"true", "1", "yes", "on", "y"}
_FALSE = {"false", "0", "no", "off", "n"}


@dataclass(frozen=True)
class ArgType:
    """A normalized parameter type: a scalar, a list of scalars or a str-keyed dict."""

    kind: str  # "scalar" | "list" | "dict"
    item: type  # the scalar, or the element/value type for list and dict
    optional: bool = False

    def describe(self) -> str:
        base = _SCALARS[self.item]
        if self.kind == "list":
            base = f"list[{base}] (a,b,c)"
        elif self.kind == "dict":
            base = f"dict[str, {_SCALARS[self.item]}] (k1=v1,k2=v2)"
        return base + (" or None" if self.optional else "")


@dataclass(frozen=True)
class ComponentArg:
    name: str
    type: ArgType
    default: Any
    help: str
    remainder: bool = False  # the function's ``*args``: every leftover CLI token

    @property
    def required(self) -> bool:
        return self.default is REQUIRED and not self.remainder

    @property
    def flag(self) -> str:
        return "--" + self.name


def _arg_type(annotation: Any) -> ArgType | None:
    """Normalize an annotation, or None when the CLI cannot express it."""
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            return None
        optional = True
        annotation = members[0]
        origin = typing.get_origin(annotation)
    if annotation in _SCALARS:
        return ArgType("scalar", annotation, optional)
    args = typing.get_args(annotation)
    if origin in (list, typing.List, Sequence) and len(args) == 1 and args[0] in _SCALARS:  # noqa: UP006
        return ArgType("list", args[0], optional)
    if origin in (dict, typing.Dict) and len(args) == 2 and args[0] is str and args[1] in _SCALARS:  # noqa: UP006
        return ArgType("dict", args[1], optional)
    return None


def _convert_scalar(text: str, item: type, where: str) -> Any:
    if item is str:
        return text
    if item is bool:
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise SpecsError(where, text, "expected a bool: true or false")
    try:
        return item(text)
    except ValueError:
        raise SpecsError(where, text, f"expected {_SCALARS[item]}") from None


def _convert(text: str, t: ArgType, where: str) -> Any:
    if t.optional and text.strip().lower() in ("none", "null"):
        return None
    if t.kind == "scalar":
        return _convert_scalar(text, t.item, where)
    if t.kind == "list":
        return [_convert_scalar(v, t.item, where) for v in text.split(",") if v != ""]
    out: dict[str, Any] = {}
    for pair in text.split(","):
        if not pair:
            continue
        k, sep, v = pair.partition("=")
        if not sep or not k:
            raise SpecsError(where, text, "expected key=value pairs separated by commas")
        out[k] = _convert_scalar(v, t.item, where)
    return out


@dataclass(frozen=True)
class ComponentProblem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class ComponentValidationError(SpecsError):
    """A function that cannot be a component; ``problems`` says where and why."""

    def __init__(self, name: str, problems: list[ComponentProblem]) -> None:
        self.problems = problems
        ValueError.__init__(
            self,
            f"{name} is not a valid component:\n" + "\n".join(f"  {p}" for p in problems),
        )
        self.field, self.value = "component", name
        self.expected = "; ".join(p.message for p in problems)


def _location(fn: Callable[..., Any]) -> tuple[str, int]:
    code = getattr(fn, "__code__", None)
    if code is not None:
        return code.co_filename, code.co_firstlineno
    try:
        return inspect.getsourcefile(fn) or "<unknown>", inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return "<unknown>", 0


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # a forward reference that does not resolve: fall back to raw text
        return dict(getattr(fn, "__annotations__", {}))


def validate_component(fn: Callable[..., Any]) -> list[ComponentProblem]:
    """Every problem that keeps ``fn`` from being a component, with file and line."""
    file, line = _location(fn)
    problems: list[ComponentProblem] = []
    name = getattr(fn, "__qualname__", repr(fn))
    if not callable(fn) or not hasattr(fn, "__code__"):
        return [ComponentProblem(file, line, f"{name} is not a Python function")]
    hints = _hints(fn)
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_KEYWORD:
            problems.append(
                ComponentProblem(file, line, f"**{p.name}: keyword catch-alls cannot be CLI args")
            )
            continue
        if p.name not in hints:
            problems.append(
                ComponentProblem(file, line, f"parameter {p.name!r} has no type annotation")
            )
            continue
        t = _arg_type(hints[p.name])
        if t is None:
            problems.append(
                ComponentProblem(
                    file,
                    line,
                    f"parameter {p.name!r} has type {hints[p.name]!r}; supported: str, int, "
                    "float, bool, Optional[...] / X | None of those, list[X], dict[str, X]",
                )
            )
        elif p.kind is p.VAR_POSITIONAL and (t.kind != "scalar" or t.optional):
            problems.append(
                ComponentProblem(file, line, f"*{p.name} must be annotated with a scalar type")
            )
    # An unannotated return is accepted (the component in pytorch/torchx's
    # docs/source/basics.rst, "Basics", has none) and checked when the component is
    # called; a return annotated as something else is an error.
    ret = hints.get("return", inspect.Signature.empty)
    if ret is not AppDef and ret is not inspect.Signature.empty:
        problems.append(
            ComponentProblem(file, line, f"return annotation is {ret!r}; it must be AppDef")
        )
    return problems


class ComponentSchema:
    """The argument schema of one component function."""

    def __init__(self, fn: Callable[..., AppDef], name: str | None = None) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        problems = validate_component(fn)
        if problems:
            raise ComponentValidationError(self.name, problems)
        doc = parse_docstring(fn.__doc__)
        self.summary = doc.summary
        self.description = doc.description
        hints = _hints(fn)
        self.args: list[ComponentArg] = []
        for p in inspect.signature(fn).parameters.values():
            t = _arg_type(hints[p.name])
            assert t is not None  # validate_component already refused the rest
            remainder = p.kind is p.VAR_POSITIONAL
            default = REQUIRED if p.default is p.empty or remainder else p.default
            self.args.append(ComponentArg(p.name, t, default, doc.args.get(p.name, ""), remainder))

    @property
    def options(self) -> dict[str, ComponentArg]:
        return {a.name: a for a in self.args if not a.remainder}

    @property
    def remainder(self) -> ComponentArg | None:
        return next((a for a in self.args if a.remainder), None)

    def _lookup(self, token: str) -> ComponentArg | None:
        name = token[2:].partition("=")[0]
        opts = self.options
        return opts.get(name) or opts.get(name.replace("-", "_"))

    def parse(self, argv: Sequence[str]) -> tuple[list[Any], dict[str, Any]]:
        """Turn CLI tokens into ``(positional, keyword)`` arguments for the function.

        ``--name value`` or ``--name=value`` for each parameter (``-j 2`` too for a
        one-letter name); ``--flag`` alone (or ``--no-flag``) for bools; repeating a list
        or dict option adds to it. The first token that is not an option (or everything
        after ``--``) goes to ``*args``.
        """
        values: dict[str, Any] = {}
        rest: list[str] = []
        i = 0
        argv = list(argv)
        while i < len(argv):
            token = argv[i]
            if token == "--":
                rest = argv[i + 1 :]
                break
            short = token[1:].partition("=")[0] if token[:1] == "-" and token[:2] != "--" else ""
            if len(short) == 1 and short in self.options:
                # ``-j 2`` for a one-letter argument, as pytorch/torchx's parser takes it
                token = "-" + token
            if not token.startswith("--") or token == "--":
                rest = argv[i:]
                break
            arg = self._lookup(token)
            negated = False
            if arg is None and token.startswith("--no-"):
                arg = self._lookup("--" + token[5:])
                negated = arg is not None and arg.type.item is bool and arg.type.kind == "scalar"
                if not negated:
                    arg = None
            if arg is None:
                if self.remainder is not None:
                    rest = argv[i:]
                    break
                # suggest flags spelled as the user spelled this one: ``--msg``, not ``msg``
                typed = token.partition("=")[0]
                raise SpecsError(
                    f"{self.name} argument",
                    token,
                    f"no such argument; {closest(typed, [f'--{o}' for o in self.options])}"
                    if self.options
                    else "this component takes no arguments",
                )
            where = f"{self.name} {arg.flag}"
            is_bool = arg.type.kind == "scalar" and arg.type.item is bool
            _, has_eq, inline = token.partition("=")
            if negated:
                values[arg.name] = False
                i += 1
                continue
            if has_eq:
                text = inline
                i += 1
            elif is_bool:
                nxt = argv[i + 1] if i + 1 < len(argv) else None
                if nxt is not None and nxt.lower() in _TRUE | _FALSE:
                    text, i = nxt, i + 2
                else:
                    text, i = "true", i + 1
            else:
                if i + 1 >= len(argv):
                    raise SpecsError(where, None, f"expected a value of type {arg.type.describe()}")
                text, i = argv[i + 1], i + 2
            value = _convert(text, arg.type, where)
            if arg.type.kind == "list" and isinstance(values.get(arg.name), list) and value:
                values[arg.name] = values[arg.name] + value
            elif arg.type.kind == "dict" and isinstance(values.get(arg.name), dict) and value:
                values[arg.name] = {**values[arg.name], **value}
            else:
                values[arg.name] = value

        missing = [a.flag for a in self.args if a.required and a.name not in values]
        if missing:
            raise SpecsError(
                f"{self.name} argument(s)", " ".join(missing), "required; see --help for each"
            )
        if rest and self.remainder is None:
            raise SpecsError(
                f"{self.name} argument", rest[0], "unexpected; this component takes no extra args"
            )
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        rem = self.remainder
        for p in inspect.signature(self.fn).parameters.values():
            if p.kind is p.VAR_POSITIONAL:
                assert rem is not None
                positional.extend(_convert(t, rem.type, f"{self.name} *{rem.name}") for t in rest)
            elif p.name in values:
                if rem is not None and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    # parameters before *args must be passed by position
                    positional.append(values[p.name])
                else:
                    keywords[p.name] = values[p.name]
            elif rem is not None and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                positional.append(p.default)
        return positional, keywords

    def call(self, argv: Sequence[str]) -> AppDef:
        """Parse ``argv`` and call the component."""
        args, kwargs = self.parse(argv)
        app = self.fn(*args, **kwargs)
        if not isinstance(app, AppDef):
            file, line = _location(self.fn)
            raise ComponentValidationError(
                self.name,
                [ComponentProblem(file, line, f"returned {type(app).__name__}, not an AppDef")],
            )
        return app

    def help(self) -> str:
        """Text for ``torchx run NAME --help``: the docstring and one line per argument."""
        lines = [f"usage: {self.name} " + " ".join(self._usage())]
        if self.summary:
            lines += ["", self.summary]
        if self.description:
            lines += ["", self.description]
        if self.args:
            lines += ["", "arguments:"]
        for a in self.args:
            if a.remainder:
                head = f"  {a.name} ... ({_SCALARS[a.type.item]})"
            else:
                dflt = "required" if a.required else f"default: {a.default!r}"
                head = f"  {a.flag} ({a.type.describe()}, {dflt})"
            lines.append(head)
            if a.help:
                lines.append(f"      {a.help}")
        return "\n".join(lines)

    def _usage(self) -> list[str]:
        parts = []
        for a in self.args:
            if a.remainder:
                parts.append(f"[{a.name} ...]")
            elif a.type.kind == "scalar" and a.type.item is bool:
                parts.append(f"[{a.flag}]")
            elif a.required:
                parts.append(f"{a.flag} {a.name.upper()}")
            else:
                parts.append(f"[{a.flag} {a.name.upper()}]")
        return parts


def get_component_schema(fn: Callable[..., AppDef], name: str | None = None) -> ComponentSchema:
    return ComponentSchema(fn, name)


# pytorch/torchx's name for the same error.
ComponentValidationException = ComponentValidationError


def _default_tokens(
    schema: ComponentSchema, given: Sequence[str], defaults: Mapping[str, Any] | None
) -> list[str]:
    """``--name=value`` tokens for the defaults in ``defaults`` the CLI tokens do not set."""
    if not defaults:
        return []
    named = {t[2:].partition("=")[0].replace("-", "_") for t in given if t.startswith("--")}
    tokens = []
    for key, value in defaults.items():
        arg = schema.options.get(key)
        if arg is None:
            raise SpecsError(
                f"{schema.name} default {key!r}",
                value,
                f"no such argument; {closest(key, list(schema.options))}",
            )
        if key not in named and value is not None:
            tokens.append(f"--{key}={_token(value)}")
    return tokens


def _token(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def parse_component_args(
    cmpnt_fn: Callable[..., AppDef],
    cmpnt_args: Sequence[str],
    cmpnt_defaults: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
) -> argparse.Namespace:
    """The component's arguments by name, as ``materialize_appdef`` would pass them.

    ``cmpnt_defaults`` replaces the function's own defaults; ``config`` values win over
    the command line (pytorch/torchx's ``builders.parse_args``).
    """
    import argparse

    schema = get_component_schema(cmpnt_fn)
    argv = [*_default_tokens(schema, cmpnt_args, cmpnt_defaults), *cmpnt_args]
    positional, keywords = schema.parse(argv)
    values: dict[str, Any] = {}
    params = list(inspect.signature(cmpnt_fn).parameters.values())
    i = 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            values[p.name] = positional[i:]
            i = len(positional)
        elif p.name in keywords:
            values[p.name] = keywords[p.name]
        elif i < len(positional):
            values[p.name] = positional[i]
            i += 1
        else:
            values[p.name] = None if p.default is p.empty else p.default
    values.update(config or {})
    return argparse.Namespace(**values)


def materialize_appdef(
    cmpnt_fn: Callable[..., AppDef],
    cmpnt_args: Sequence[str],
    cmpnt_defaults: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
) -> AppDef:
    """Call component ``cmpnt_fn`` with CLI-style ``cmpnt_args`` (``["--msg", "hi"]``).

    ``cmpnt_defaults`` replaces the function's own defaults for the arguments not given;
    ``config`` values are passed whatever the command line says.
    """
    schema = get_component_schema(cmpnt_fn)
    argv = [*_default_tokens(schema, cmpnt_args, cmpnt_defaults), *cmpnt_args]
    if not config:
        return schema.call(argv)
    # config wins over the command line: drop the given values it replaces
    argv = [*argv, *(f"--{k}={_token(v)}" for k, v in config.items() if v is not None)]
    return schema.call(argv)
