"""The one reader of a component's command-line arguments.

The CLI, the runner (with ``[component:NAME]`` defaults) and ``materialize_appdef`` all go
through ``read_argv``; the rules are pytorch/torchx 0.7's (an argparse parser per
component):

- ``--name VALUE`` or ``--name=VALUE`` for each parameter; ``-x VALUE`` (or ``-xVALUE``)
  for a one-letter parameter; a long name may be shortened while it stays unambiguous;
- a flag the component does not declare is refused (never handed to the script);
- the component's ``*args`` are everything after ``--``, or the first word that is not a
  flag and everything after it;
- ``--help`` shows the help; so does ``-h``, unless the component has a parameter ``h``
  (then ``-h`` is that parameter, as in 0.7, and a bare ``-h`` with no value is the help).

Beyond 0.7: ``--flag`` alone (or ``--no-flag``) for a bool, and a list or dict option
given twice adds to it; a scalar given twice is refused, as 0.7 did. A word after a bool
flag is still its value, as in 0.7, and one that is no bool (``--debug flase``) is refused
where 0.7 read it as false: ``--flag -- WORD`` passes the word to the program.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torchx.specs._arg_types import convert_arg
from torchx.specs._errors import SpecsError, _NotGivenError, closest, specs_message
from torchx.specs._runopts import BOOL_WORDS

if TYPE_CHECKING:
    from torchx.specs._component import ComponentArg, ComponentSchema


class UnknownComponentArgumentError(SpecsError):
    """A flag the component does not declare; ``token`` is the flag as written."""

    def __init__(self, component: str, token: str, expected: str) -> None:
        self.token = token
        super().__init__(f"{component} argument", token, expected)


@dataclass
class ParsedArgs:
    """What ``read_argv`` found: typed values by parameter name and the ``*args`` tokens."""

    values: dict[str, Any] = field(default_factory=dict)
    rest: list[str] = field(default_factory=list)
    # True when ``rest`` came after ``--``: the user said plainly it is the script's
    rest_after_dashdash: bool = False
    # parameter name -> (its flag as written, its text) for each time it was given: how
    # the component's own errors about that parameter spell its flag (see ``as_written``)
    written: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # parameter name -> where its default came from, for those ``apply_defaults`` filled
    # in: what errors about its value name instead of a flag the user never wrote
    defaulted: dict[str, str] = field(default_factory=dict)
    help: bool = False


def _looks_like_flag(token: str) -> bool:
    if not token.startswith("-") or token == "-":
        return False
    if token.startswith("--"):
        return True  # no number starts with two signs: spare the float() that fails
    # a negative number is a value, as argparse takes it
    try:
        float(token)
    except ValueError:
        return True
    return False


def _is_bool(arg: ComponentArg) -> bool:
    return arg.type.kind == "scalar" and arg.type.item is bool


def _find_option(
    options: dict[str, ComponentArg], token: str
) -> tuple[ComponentArg | None, bool, str]:
    """The parameter of ``options`` (a schema's) that ``token`` names, whether it is a
    ``--no-`` form, and an inline value.

    The inline value is what follows ``=`` (or, for ``-xVALUE``, what follows ``-x``);
    ``"\\0"`` when there is none.
    """
    none = "\0"
    if not token.startswith("--"):
        body = token[1:]
        name, eq, inline = body.partition("=")
        if len(name) == 1 and name in options:
            return options[name], False, inline if eq else none
        if body[:1] in options and len(body) > 1 and not eq:
            return options[body[0]], False, body[1:]
        return None, False, none
    name, eq, inline = token[2:].partition("=")
    inline = inline if eq else none
    found = options.get(name) or options.get(name.replace("-", "_"))
    if found is not None:
        return found, False, inline
    if name.startswith("no-") or name.startswith("no_"):
        negated = options.get(name[3:]) or options.get(name[3:].replace("-", "_"))
        if negated is not None and _is_bool(negated):
            return negated, True, inline
    # an unambiguous prefix, as argparse accepts (``--scr`` for ``--script``)
    wanted = name.replace("-", "_")
    matches = [o for o in options.values() if len(wanted) > 1 and o.name.startswith(wanted)]
    if len(matches) == 1:
        return matches[0], False, inline
    return None, False, none


def _help_follows(schema: ComponentSchema, tokens: Sequence[str]) -> bool:
    for token in tokens:
        if token == "--":
            return False
        if token == "--help" or (token == "-h" and "h" not in schema.options):
            return True
    return False


def _no_positional(schema: ComponentSchema, token: str) -> SpecsError:
    flags = [f"--{o}" for o in schema.options]
    return SpecsError(
        f"{schema.name} argument",
        token,
        "unexpected; this component takes no positional arguments"
        + (f" (its flags: {', '.join(flags)})" if flags else ""),
    )


def read_argv(
    schema: ComponentSchema, argv: Sequence[str], *, unknown_hint: str = ""
) -> ParsedArgs:
    """Read ``argv`` by the rules of the module docstring; required ones are not checked
    here (defaults may still come from a config file: see ``bind``).

    ``unknown_hint`` ends the error for an undeclared flag (the CLI says where a torchx
    flag goes).
    """
    out = ParsedArgs()
    tokens = list(argv)
    options = schema.options
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--":
            # with no *args, words after ``--`` have nowhere to go: refused, as 0.7's
            # argparse did, never dropped from the launch
            if schema.remainder is None and i + 1 < len(tokens):
                raise _no_positional(schema, tokens[i + 1])
            out.rest, out.rest_after_dashdash = tokens[i + 1 :], True
            break
        if not _looks_like_flag(token):
            if schema.remainder is None:
                raise _no_positional(schema, token)
            out.rest = tokens[i:]
            break
        if token == "--help" or (token == "-h" and "h" not in options):
            out.help = True
            return out
        arg, negated, inline = _find_option(options, token)
        if arg is None:
            if _help_follows(schema, tokens[i + 1 :]):
                out.help = True
                return out
            typed = token.partition("=")[0]
            flags = [f"--{o}" for o in options]
            hint = closest(typed, flags) if flags else "this component takes no flags"
            if schema.remainder is not None:
                hint += f" (to pass {typed} to the program, put it after '--')"
            raise UnknownComponentArgumentError(
                schema.name, token, f"no such argument; {hint}{unknown_hint}"
            )
        # the flag as the user wrote it: ``--n`` and ``-n`` both name parameter n
        where = f"{schema.name} {arg.flag if token.startswith('--') else '-' + arg.name}"
        i += 1
        if negated:
            text = "false"
        elif inline != "\0":
            text = inline
        elif _is_bool(arg):
            nxt = tokens[i] if i < len(tokens) else None
            # A word after a bool flag is its value, as in 0.7 (where every flag took one):
            # one that is no bool is refused, never passed to the program with the flag
            # on, the opposite of what 0.7 made of ``--debug flase``.
            if nxt is not None and not _looks_like_flag(nxt):
                if schema.remainder is not None and nxt.strip().lower() not in BOOL_WORDS:
                    raise SpecsError(
                        where,
                        nxt,
                        f"expected a bool: true or false (to pass {nxt!r} to the program, "
                        f"write {where.rpartition(' ')[2]} -- {nxt})",
                    )
                text, i = nxt, i + 1
            else:
                text = "true"
        else:
            nxt = tokens[i] if i < len(tokens) else None
            if nxt is None or _looks_like_flag(nxt) or nxt == "--":
                if arg.name == "h" and token == "-h":
                    out.help = True  # ``dist.ddp -h`` alone asks for the help
                    return out
                if nxt is None:  # the flag ends the command line
                    raise _NotGivenError(
                        f"{where} value",
                        f"it takes a value of type {arg.type.describe()}: "
                        f"{where.rpartition(' ')[2]} VALUE",
                    )
                raise SpecsError(
                    where,
                    nxt,
                    f"expected a value of type {arg.type.describe()}"
                    f" (a value that starts with '-' is written {arg.flag}=VALUE)",
                )
            text, i = nxt, i + 1
        value = convert_arg(text, arg.type, where)
        out.written.setdefault(arg.name, []).append((where.rpartition(" ")[2], text))
        before = out.values.get(arg.name)
        if arg.name in out.values and arg.type.kind == "scalar":
            raise SpecsError(where, text, f"given twice (first {before!r}); give it once")
        if isinstance(before, list) and value:
            value = before + value
        elif isinstance(before, dict) and value:
            value = {**before, **value}
        out.values[arg.name] = value
    return out


def apply_defaults(
    schema: ComponentSchema,
    parsed: ParsedArgs,
    defaults: dict[str, Any],
    sources: Mapping[str, str] | None = None,
) -> None:
    """Fill the parameters ``parsed`` lacks from ``defaults`` (by parameter name; a str
    value is read as on the command line). Unknown names are the caller's to refuse.
    ``sources``: where a default came from (``/p/.torchxconfig [component:NAME] key``), the
    field an error about its value names."""
    for name, value in defaults.items():
        arg = schema.options[name]
        if name in parsed.values or value is None:
            continue
        where = (sources or {}).get(name) or f"{schema.name} {arg.flag} (default)"
        if isinstance(value, str):
            value = convert_arg(value, arg.type, where)
        parsed.values[name] = value
        parsed.defaulted[name] = where


def as_written(error: SpecsError, schema: ComponentSchema, parsed: ParsedArgs) -> None:
    """Spell the flag in ``error``, raised by the component of ``schema``, as the user wrote
    it (``dist.ddp --j``, not the component's ``dist.ddp -j``).

    Only a field that names one of the component's own parameters, ``NAME -x`` or
    ``NAME --x`` (optionally followed by `` (note)``), changes, and only its flag: every
    other field, and every error of several lines, is left as the component raised it.
    The flag is the one whose text is the error's value when the parameter was given more
    than once with different spellings; nothing changes when that is not one flag. For a
    parameter the user did not give, whose value ``apply_defaults`` filled in, the field
    becomes where that default came from (a config file's section and key).
    """
    prefix = f"{schema.name} "
    if not error.field.startswith(prefix):
        return
    if str(error) != specs_message(error.field, error.value, error.expected):
        return
    spelled, paren, note = error.field[len(prefix) :].partition(" (")
    name = spelled.lstrip("-")
    if spelled not in (f"-{name}", f"--{name}") or name not in schema.options:
        return
    given = parsed.written.get(name, [])
    if not given and name in parsed.defaulted:
        error.field = parsed.defaulted[name]
    else:
        flags = {f for f, text in given if text == error.value} or {f for f, _ in given}
        if len(flags) != 1:
            return
        error.field = prefix + flags.pop() + paren + note
    # the type stays (a KeyError too, say): callers that catch it keep catching it
    error.args = (specs_message(error.field, error.value, error.expected),)


def note_flags_among_words(error: SpecsError, schema: ComponentSchema, parsed: ParsedArgs) -> None:
    """When ``error`` (raised calling the component of ``schema``) names one of its flags
    that the user wrote after the program's first word, where it went to the program
    (``utils.python a --script x.py``: "--script not given"), say so on the same line.

    Only a flag the message itself names: a program may well take a flag of that name."""
    if parsed.rest_after_dashdash or not parsed.rest:
        return
    text = str(error)
    for token in parsed.rest[1:]:
        flag = token.partition("=")[0]
        arg = schema.option(flag.lstrip("-")) if _looks_like_flag(flag) else None
        if arg is None or arg.remainder:
            continue
        named = (re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text) for f in {flag, arg.flag})
        if not any(named):
            continue
        note = (
            f"{flag} came after the program's first word {parsed.rest[0]!r}, so it went to "
            f"the program: put the options of {schema.name} before the program's words"
        )
        error.expected = f"{error.expected}; {note}"
        error.args = (f"{text}; {note}",)
        return
