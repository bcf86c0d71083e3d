"""The component part of ``torchx run``: which component, and its arguments read once.

The arguments are read by the component's schema (``ComponentSchema.read``), the same
reader the runner and ``materialize_appdef`` use; this module only adds what the command
line knows: ``[cli:run] component`` when none is named, and where a ``torchx run`` flag
written after the component belongs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from torchx.cli._errors import CliError, misplaced_root_flag

if TYPE_CHECKING:
    from torchx.cli._run_setup import RunSetup
    from torchx.specs import ComponentSchema, ParsedArgs

# The options of ``torchx run`` itself (a test checks them against the command).
RUN_FLAGS = frozenset(
    {
        "-s",
        "--scheduler",
        "-cfg",
        "--cfg",
        "--scheduler_args",
        "--dryrun",
        "--wait",
        "--no-wait",
        "--log",
        "--no-log",
        "--workspace",
        "--buck-target",
        "--json",
        "--parent_run_id",
        "--parent-run-id",
        "--sweep",
        "--parallel",
        "--resume",
    }
)
MISSING_COMPONENT = (
    "component: none given; name one (torchx run utils.echo --msg hi) or set "
    "`component = NAME` in the [cli:run] section of .torchxconfig"
)


def split_component(
    component: str | None, args: Sequence[str], configured: Callable[[], str | None]
) -> tuple[str, list[str]]:
    """The component's name and its arguments, as 0.7 read them.

    When the first word is a flag (or there is none), every word is the component's and
    the component is ``[cli:run] component`` of the config files (``configured()``).
    """
    argv = list(args)
    if component is not None and component != "--" and not component.startswith("-"):
        return component, argv
    if component is not None and component != "--":
        argv.insert(0, component)
    name = configured()
    if not name:
        if argv and argv[0].startswith("-") and argv[0] != "--":
            raise CliError(_not_a_run_flag(argv[0]))
        raise CliError(MISSING_COMPONENT)
    return name, argv


def _not_a_run_flag(token: str) -> str:
    """A flag before the component that torchx run does not have: one of torchx's own, a
    typo of one of torchx run's, or a component's argument written before the component's
    name. The flag is what is wrong (the component may well follow it), so the message
    opens with the token as written, as one after the component does."""
    import difflib  # only paid for on the error path

    flag = token.partition("=")[0]
    start = f"torchx run: got {token!r}; "
    root = misplaced_root_flag(flag, _RUN_EXAMPLE)
    if root is not None:
        return start + root
    start += "no such option; "
    # A strict cutoff: short flags are near each other (--msg, --log) without being typos.
    near = difflib.get_close_matches(flag, sorted(RUN_FLAGS), n=1, cutoff=0.8)
    if near:  # a typo of torchx run's own flag, which goes before the component
        return f"{start}did you mean {near[0]!r}? (torchx run {near[0]} ... COMPONENT ...)"
    return (
        f"{start}name the component before its own arguments (torchx run COMPONENT {flag} "
        "...) or set `component = NAME` in the [cli:run] section of .torchxconfig"
    )


def _misplaced(flag: str, component: str) -> str:
    return (
        f"{flag} is an option of torchx run, not of {component}: put it before the "
        f"component (torchx run {flag} ... {component} ...)"
    )


# how torchx run is shown in the example of where a misplaced option of torchx goes
_RUN_EXAMPLE = "run COMPONENT"


def read_component(name: str, argv: Sequence[str]) -> tuple[ComponentSchema, ParsedArgs]:
    """The component's schema and its arguments read; a ``torchx run`` flag written among
    them is refused naming where it goes, so ``... --dryrun`` never submits for real.

    Needs no runner: an unknown component or ``--help`` is answered without loading the
    schedulers.
    """
    from torchx.components import get_component
    from torchx.specs import UnknownComponentArgumentError

    schema = get_component(name)
    try:
        parsed = schema.read(argv)
    except UnknownComponentArgumentError as e:
        flag = e.token.partition("=")[0]
        if flag in RUN_FLAGS:
            raise CliError(f"{name} argument: got {e.token!r}; {_misplaced(flag, name)}") from None
        root = misplaced_root_flag(flag, _RUN_EXAMPLE)
        if root is not None:
            raise CliError(f"{name} argument: got {e.token!r}; {root}") from None
        raise
    # Words after the component's flags are its program's (as in 0.7); ``--dryrun`` among
    # them is still refused: the cost of a mistake is a real submission. After ``--`` the
    # user has said plainly that it is the program's.
    if not parsed.rest_after_dashdash and "--dryrun" in parsed.rest:
        raise CliError(
            f"{name} argument: got '--dryrun' among the program's arguments; "
            f"{_misplaced('--dryrun', name)}, or after '--' to pass it to the program"
        )
    return schema, parsed


def component_of_command_line(
    component: str | None, args: Sequence[str], setup: RunSetup
) -> tuple[str, list[str], ComponentSchema, ParsedArgs]:
    """``split_component`` then ``read_component``, with ``[cli:run] component`` when the
    command line names none; a component that this names and that does not exist is
    refused naming the config file to fix, since the user did not type it."""
    from torchx.specs import SpecsError

    name, argv = split_component(component, args, lambda: setup.defaults.get("component"))
    try:
        schema, parsed = read_component(name, argv)
    except SpecsError as e:
        if name == component or e.field != "component":
            raise
        raise setup.config.cli_default_error("run", "component", e.expected) from None
    return name, argv, schema, parsed
