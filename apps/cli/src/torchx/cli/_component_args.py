"""The component part of ``torchx run``: find the component, show its help, build its AppDef."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchx.runner import Runner
    from torchx.specs import AppDef, ComponentSchema

HELP_FLAGS = ("--help", "-h")


def scan(schema: ComponentSchema, argv: Sequence[str]) -> tuple[list[str], bool]:
    """Normalize the component's flags and tell whether its help was asked for.

    ``-j 2`` is accepted for ``--j 2``: a single dash works for one-letter argument names.
    ``-h`` is the component's help unless the component has an argument ``h`` (the named
    resource of ``dist.ddp``): then, as with pytorch/torchx, it is that argument and only
    ``--help`` shows the help. Only the component's own options are looked at: from the
    first token that is not one of them (its ``*args``, or ``--``) everything is passed
    through untouched, so a ``-m`` or ``--help`` meant for the user's script reaches it.
    """
    options = schema.options
    out: list[str] = []
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in HELP_FLAGS and not (token == "-h" and "h" in options):
            return out + tokens[i:], True
        if token == "--" or not token.startswith("-"):
            break
        name = token.lstrip("-").partition("=")[0]
        arg = options.get(name) or options.get(name.replace("-", "_"))
        if arg is None and name.startswith("no-"):
            arg = options.get(name[3:])
        if arg is None:
            break
        if not token.startswith("--"):
            token = "-" + token
        out.append(token)
        i += 1
        takes_value = not (arg.type.kind == "scalar" and arg.type.item is bool)
        if takes_value and "=" not in token and i < len(tokens):
            out.append(tokens[i])
            i += 1
    return out + tokens[i:], False


def component_schema(
    component: str, argv: Sequence[str]
) -> tuple[ComponentSchema, list[str], bool]:
    """The component's schema, its normalized arguments, and whether its help was asked.

    Needs no runner: an unknown component or ``--help`` is answered without loading the
    schedulers.
    """
    from torchx.components import get_component

    schema = get_component(component)
    normalized, help_asked = scan(schema, argv)
    return schema, normalized, help_asked


def component_app(runner: Runner, component: str, normalized: Sequence[str]) -> AppDef:
    """The AppDef, made by the runner so ``[component:NAME]`` config defaults apply."""
    return runner.component_app(component, list(normalized))
