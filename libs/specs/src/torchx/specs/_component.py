"""Component introspection.

A component is a typed function that returns an AppDef. Its signature and docstring
give an argument schema: what ``torchx run COMPONENT --help`` shows, and what
turns a list of command-line strings into the typed call of the function.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

from torchx.specs._app import AppDef
from torchx.specs._arg_types import _SCALARS, PYTHON_ONLY, ArgType, _arg_type, convert_arg
from torchx.specs._component_argv import (
    ParsedArgs,
    apply_defaults,
    as_written,
    note_flags_among_words,
    read_argv,
)
from torchx.specs._docstring import Docstring, parse_docstring
from torchx.specs._errors import SpecsError, _NotGivenError, _ProblemsError, closest
from torchx.util.notes import add_note


class _Required:
    def __repr__(self) -> str:
        return "<required>"


# The default of a component argument the user must give. Not ``specs.MISSING`` (a plain
# string, as in pytorch/torchx) so that no string default is ever mistaken for it.
REQUIRED: Any = _Required()


@dataclass(frozen=True)
class ComponentArg:
    name: str
    type: ArgType
    default: Any
    remainder: bool = False  # the function's ``*args``: every leftover CLI token
    # The component's parsed docstring, asked for only when help is shown: parsing it
    # imports the docstring parser, which reading and calling a component never needs.
    doc: Callable[[], Docstring] = field(default=Docstring, compare=False, repr=False)

    @property
    def help(self) -> str:
        """This argument's line of the docstring's argument section ("" if none)."""
        return self.doc().args.get(self.name, "")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED and not self.remainder

    @property
    def flag(self) -> str:
        return "--" + self.name


@dataclass(frozen=True)
class ComponentProblem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class ComponentValidationError(_ProblemsError):
    """A function that cannot be a component; ``problems`` says where and why."""

    def __init__(self, name: str, problems: list[ComponentProblem]) -> None:
        self.problems = problems
        heading = f"{name} is not a valid component:"
        lines = [str(p) for p in problems]
        super().__init__("component", name, heading, lines, "; ".join(p.message for p in problems))


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
    return _read_component(fn)[0]


def _read_component(
    fn: Callable[..., Any],
) -> tuple[list[ComponentProblem], dict[str, Any], tuple[inspect.Parameter, ...]]:
    """``validate_component``'s problems, with the type hints and parameters it read (a
    schema is made of them: reading them again would double the cost of a lookup)."""
    file, line = _location(fn)
    problems: list[ComponentProblem] = []
    name = getattr(fn, "__qualname__", repr(fn))
    if not callable(fn) or not hasattr(fn, "__code__"):
        return [ComponentProblem(file, line, f"{name} is not a Python function")], {}, ()
    hints = _hints(fn)
    params = tuple(inspect.signature(fn).parameters.values())
    for p in params:
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
        if t is None and (p.default is p.empty or p.kind is p.VAR_POSITIONAL):
            problems.append(
                ComponentProblem(
                    file,
                    line,
                    f"parameter {p.name!r} has type {hints[p.name]!r}; supported: str, int, "
                    "float, bool, Optional[...] / X | None of those, list[X], dict[str, X] "
                    "(a parameter of another type needs a default: it is set from Python only)",
                )
            )
        elif p.kind is p.VAR_POSITIONAL and t is not None and (t.kind != "scalar" or t.optional):
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
    return problems, hints, params


class ComponentSchema:
    """The argument schema of one component function."""

    def __init__(self, fn: Callable[..., AppDef], name: str | None = None) -> None:
        if not callable(fn):
            raise SpecsError(
                "component",
                fn,
                "give the component function; for a name such as 'utils.echo' use"
                " torchx.specs.finder.get_component(name).fn",
            )
        self.fn = fn
        self.name = name or fn.__name__
        problems, hints, params = _read_component(fn)
        if problems:
            raise ComponentValidationError(self.name, problems)
        # parsed on first use (see ``ComponentArg.doc``), as the function had it now
        self._doc_text = fn.__doc__
        self._parsed_doc: Docstring | None = None
        self.args: list[ComponentArg] = []
        # kept: ``bind`` needs them at every call (a sweep calls a component per trial)
        self._params = params
        for p in self._params:
            # validate_component let through only defaulted parameters of other types
            t = _arg_type(hints[p.name]) or PYTHON_ONLY
            remainder = p.kind is p.VAR_POSITIONAL
            default = REQUIRED if p.default is p.empty or remainder else p.default
            self.args.append(ComponentArg(p.name, t, default, remainder, self._doc))

    def _doc(self) -> Docstring:
        if self._parsed_doc is None:
            self._parsed_doc = parse_docstring(self._doc_text)
        return self._parsed_doc

    @property
    def summary(self) -> str:
        """The docstring's first paragraph, on one line."""
        return self._doc().summary

    @property
    def description(self) -> str:
        """The docstring after its summary, the argument section left out."""
        return self._doc().description

    @property
    def options(self) -> dict[str, ComponentArg]:
        return {a.name: a for a in self.args if not a.remainder}

    @property
    def remainder(self) -> ComponentArg | None:
        return next((a for a in self.args if a.remainder), None)

    def option(self, name: str) -> ComponentArg | None:
        """The parameter called ``name`` (``-`` read as ``_``), or None."""
        opts = self.options
        return opts.get(name) or opts.get(name.replace("-", "_"))

    def read(self, argv: Sequence[str], *, unknown_hint: str = "") -> ParsedArgs:
        """Read CLI tokens (see ``torchx.specs._component_argv``); nothing is called."""
        if isinstance(argv, str):  # read one character at a time, it would name a '-'
            raise SpecsError(
                f"{self.name} arguments",
                argv,
                f"give a list of tokens, e.g. {argv.split()!r} (shlex.split(text) splits one)",
            )
        return read_argv(self, argv, unknown_hint=unknown_hint)

    def apply_defaults(
        self,
        parsed: ParsedArgs,
        defaults: Mapping[str, Any],
        sources: Mapping[str, str] | None = None,
    ) -> None:
        """Fill what ``parsed`` lacks from ``defaults`` (parameter name -> value; a str is
        read as on the command line). ``sources`` (parameter name -> where its default came
        from, e.g. ``/p/.torchxconfig [component:NAME] key``) is what an error about that
        value names, the component's own errors included."""
        apply_defaults(self, parsed, dict(defaults), sources)

    def bind(self, parsed: ParsedArgs) -> tuple[list[Any], dict[str, Any]]:
        """``(positional, keyword)`` arguments for the function; required ones checked."""
        values, rest = parsed.values, parsed.rest
        missing = [a for a in self.args if a.required and a.name not in values]
        if missing:
            flags = ", ".join(a.flag for a in missing)
            example = " ".join(f"{a.flag} {a.name.upper()}" for a in missing)
            raise _NotGivenError(
                f"{self.name} {flags}",
                f"required; add {example} (torchx run {self.name} --help describes "
                f"{'them' if len(missing) > 1 else 'it'})",
            )
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        rem = self.remainder
        for p in self._params:
            if p.kind is p.VAR_POSITIONAL:
                assert rem is not None
                positional.extend(
                    convert_arg(t, rem.type, f"{self.name} *{rem.name}") for t in rest
                )
            elif p.name in values:
                if rem is not None and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    # parameters before *args must be passed by position
                    positional.append(values[p.name])
                else:
                    keywords[p.name] = values[p.name]
            elif rem is not None and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                positional.append(p.default)
        return positional, keywords

    def parse(self, argv: Sequence[str]) -> tuple[list[Any], dict[str, Any]]:
        """Turn CLI tokens into ``(positional, keyword)`` arguments for the function."""
        return self.bind(self.read(argv))

    def call_parsed(self, parsed: ParsedArgs) -> AppDef:
        """Call the component with what ``read`` found."""
        try:
            args, kwargs = self.bind(parsed)
            app = self.fn(*args, **kwargs)
        except SpecsError as e:
            as_written(e, self, parsed)  # it names its field: as the user wrote it
            note_flags_among_words(e, self, parsed)
            raise
        except Exception as e:
            # A note (PEP 678), not another exception type: callers that catch what the
            # component raises keep catching it, and the CLI can say whose error it is.
            add_note(
                e,
                f"raised by component {self.name}; fix the component or the arguments given to it",
            )
            raise
        if not isinstance(app, AppDef):
            file, line = _location(self.fn)
            raise ComponentValidationError(
                self.name,
                [ComponentProblem(file, line, f"returned {type(app).__name__}, not an AppDef")],
            )
        return app

    def call(self, argv: Sequence[str]) -> AppDef:
        """Parse ``argv`` and call the component."""
        return self.call_parsed(self.read(argv))

    def help(self) -> str:
        """Text for ``torchx run NAME --help``: the docstring and one line per argument.

        A docstring's reStructuredText literals (two backticks each side) read as one
        backtick each side here, as a terminal shows them."""
        import re

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
        return re.sub(r"``([^`]+)``", r"`\1`", "\n".join(lines))

    def _usage(self) -> list[str]:
        # The program's words last, wherever the signature declares them: everything from
        # the first of them on goes to the program, so an option written after them (as a
        # usage line listing them first suggests) would be taken as one of its words.
        parts, remainder = [], []
        for a in self.args:
            if a.remainder:
                remainder.append(f"[{a.name} ...]")
            elif a.type.kind == "scalar" and a.type.item is bool:
                parts.append(f"[{a.flag}]")
            elif a.required:
                parts.append(f"{a.flag} {a.name.upper()}")
            else:
                parts.append(f"[{a.flag} {a.name.upper()}]")
        return parts + remainder


def get_component_schema(fn: Callable[..., AppDef], name: str | None = None) -> ComponentSchema:
    return ComponentSchema(fn, name)


# pytorch/torchx's name for the same error.
ComponentValidationException = ComponentValidationError


def _with_defaults(
    schema: ComponentSchema,
    argv: Sequence[str],
    defaults: Mapping[str, Any] | None,
    config: Mapping[str, Any] | None,
) -> ParsedArgs:
    """``argv`` read, then ``defaults`` for what it lacks, then ``config`` over all."""
    parsed = schema.read(argv)
    for source, given in (("default", defaults), ("config", config)):
        for key in given or {}:
            if schema.option(key) is None:
                raise SpecsError(
                    f"{schema.name} {source} {key!r}",
                    (given or {})[key],
                    f"no such argument; {closest(key, list(schema.options))}",
                )
    for key in config or {}:
        # config wins over the command line: set again whatever the line gave
        parsed.values.pop(key, None)
    apply_defaults(schema, parsed, dict(config or {}))
    apply_defaults(schema, parsed, dict(defaults or {}))
    return parsed


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
    parsed = _with_defaults(schema, cmpnt_args, cmpnt_defaults, config)
    schema.bind(parsed)  # the required ones
    values: dict[str, Any] = {}
    for p in inspect.signature(cmpnt_fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            rem = schema.remainder
            assert rem is not None
            values[p.name] = [convert_arg(t, rem.type, f"*{p.name}") for t in parsed.rest]
        elif p.name in parsed.values:
            values[p.name] = parsed.values[p.name]
        else:
            values[p.name] = None if p.default is p.empty else p.default
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
    return schema.call_parsed(_with_defaults(schema, cmpnt_args, cmpnt_defaults, config))
