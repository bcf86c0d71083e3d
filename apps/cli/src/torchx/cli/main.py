"""Entry point of the ``torchx`` command (``torchx = "torchx.cli.main:run"``).

Besides its builtin commands, ``torchx NAME`` runs a command that an installed package
registered under the ``torchx.cli.cmds`` entry-point group (a
:class:`~torchx.cli.cmd_base.SubCommand` class). Those are looked up only when NAME is not
a builtin, so they cost the builtin commands nothing at start-up.

``get_sub_cmds``, ``create_parser`` and ``run_main`` are pytorch/torchx 0.7's argparse
front end, for code that builds its own ``torchx``-like tool from the subcommands.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from torchx.cli.colors import BLUE, ENDC, GRAY

if TYPE_CHECKING:
    import argparse

    from torchx.cli.cmd_base import SubCommand

CMDS_GROUP = "torchx.cli.cmds"
# The builtin commands (the typer app's), which a plug-in cannot replace.
BUILTIN_COMMANDS = (
    "builtins",
    "cancel",
    "configure",
    "describe",
    "list",
    "log",
    "requeue",
    "run",
    "runopts",
    "status",
    "tracker",
    "wait",
)
# Options of ``torchx`` itself that take a value, to find the command after them.
_VALUE_OPTIONS = ("--log_level", "--log-level")

sub_parser_description = """Use the following commands to run operations, e.g.:
torchx run ${JOB_NAME}
"""


def get_default_sub_cmds() -> dict[str, SubCommand]:
    """The builtin commands, as SubCommand objects."""
    from torchx.cli.cmd_cancel import CmdCancel
    from torchx.cli.cmd_configure import CmdConfigure
    from torchx.cli.cmd_describe import CmdDescribe
    from torchx.cli.cmd_list import CmdList
    from torchx.cli.cmd_log import CmdLog
    from torchx.cli.cmd_run import CmdBuiltins, CmdRun
    from torchx.cli.cmd_runopts import CmdRunopts
    from torchx.cli.cmd_status import CmdStatus
    from torchx.cli.cmd_tracker import CmdTracker

    return {
        "builtins": CmdBuiltins(),
        "cancel": CmdCancel(),
        "configure": CmdConfigure(),
        "describe": CmdDescribe(),
        "list": CmdList(),
        "log": CmdLog(),
        "run": CmdRun(),
        "runopts": CmdRunopts(),
        "status": CmdStatus(),
        "tracker": CmdTracker(),
    }


def _warn(text: str) -> None:
    print(f"torchx: warning: {text}", file=sys.stderr)


def plugin_commands() -> dict[str, SubCommand]:
    """The commands installed packages add (``torchx.cli.cmds``), by name.

    A plug-in that cannot be loaded or made, or that is named like a builtin command, is
    left out with a warning naming it; the others still work.
    """
    from importlib.metadata import entry_points

    from torchx.cli.cmd_base import SubCommand

    found: dict[str, SubCommand] = {}
    for ep in entry_points(group=CMDS_GROUP):
        if ep.name in BUILTIN_COMMANDS:
            _warn(
                f"command plug-in {ep.name!r} ({ep.value}) is named like a builtin command "
                "and is ignored; register it under another name"
            )
            continue
        try:
            made = ep.load()()
        except Exception as e:
            _warn(f"command plug-in {ep.name!r} ({ep.value}) could not be loaded: {e!r}")
            continue
        if not isinstance(made, SubCommand) and not (
            callable(getattr(made, "add_arguments", None)) and callable(getattr(made, "run", None))
        ):
            _warn(
                f"command plug-in {ep.name!r} ({ep.value}) is not a torchx.cli.cmd_base."
                "SubCommand (it needs add_arguments and run)"
            )
            continue
        found[ep.name] = made
    return found


def load_group(group: str, default: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """``torchx.util.entrypoints.load_group``, imported when called (it reads installed
    packages' metadata, which the CLI's own commands never need)."""
    from torchx.util.entrypoints import load_group as load

    return load(group, default)


def get_sub_cmds() -> dict[str, SubCommand]:
    """The builtin commands and the plug-ins' (``torchx.cli.cmds``), for a tool built on
    ``create_parser``/``run_main``: as in pytorch/torchx, a plug-in may replace a builtin
    there (the ``torchx`` command itself does not let it). A plug-in that cannot be loaded
    is left out with a warning naming it."""
    cmds = get_default_sub_cmds()
    for name, make in (load_group(CMDS_GROUP, default={}) or {}).items():
        try:
            cmds[name] = make()
        except Exception as e:
            _warn(f"command plug-in {name!r} could not be loaded: {e!r}")
    return cmds


def create_parser(subcmds: dict[str, SubCommand]) -> argparse.ArgumentParser:
    """An argparse parser with one subparser per entry of ``subcmds``."""
    import argparse

    from torchx.version import __version__

    parser = argparse.ArgumentParser(prog="torchx", description="torchx CLI")
    parser.add_argument(
        "--log_level",
        type=str,
        default=None,
        help="python logging level: DEBUG, INFO, WARNING, ERROR (default: $LOGLEVEL, else WARNING)",
    )
    parser.add_argument("--version", action="version", version=f"torchx-{__version__}")
    commands = parser.add_subparsers(title="sub-commands", description=sub_parser_description)
    for name, cmd in subcmds.items():
        sub = commands.add_parser(name)
        cmd.add_arguments(sub)
        sub.set_defaults(func=cmd.run)
    return parser


def _set_log_level(level: str | None) -> None:
    import logging
    import os

    name = (level or os.environ.get("LOGLEVEL") or "WARNING").upper()
    if not isinstance(logging.getLevelName(name), int):
        raise ValueError(f"--log_level: got {level!r}; expected DEBUG, INFO, WARNING or ERROR")
    logging.basicConfig(
        level=name,
        format=f"{BLUE}torchx{ENDC} {GRAY}%(asctime)s %(levelname)-8s{ENDC} %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
    )


def run_main(subcmds: dict[str, SubCommand], argv: Sequence[str] | None = None) -> None:
    """Parse ``argv`` with ``create_parser(subcmds)`` and run the command it names; with
    no command, print the help and exit 1."""
    parser = create_parser(subcmds)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    _set_log_level(args.log_level)
    if "func" not in args:
        parser.print_help()
        sys.exit(1)
    args.func(args)


def _split_command(args: list[str]) -> tuple[list[str], str | None, list[str]]:
    """``torchx [OPTIONS] NAME REST...`` -> (OPTIONS, NAME, REST)."""
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            return args[:i], (args[i + 1] if i + 1 < len(args) else None), args[i + 2 :]
        if not token.startswith("-"):
            return args[:i], token, args[i + 1 :]
        i += 2 if token in _VALUE_OPTIONS else 1
    return args, None, []


def _run_plugin(name: str, cmd: SubCommand, options: list[str], rest: list[str]) -> int:
    import argparse

    debug = "--debug" in options
    level = None
    for i, token in enumerate(options):
        if token in _VALUE_OPTIONS and i + 1 < len(options):
            level = options[i + 1]
        elif token.startswith(tuple(o + "=" for o in _VALUE_OPTIONS)):
            level = token.partition("=")[2]
    parser = argparse.ArgumentParser(prog=f"torchx {name}")
    try:
        _set_log_level(level)
        cmd.add_arguments(parser)
        parsed, unknown = parser.parse_known_args(rest)
        if unknown:
            return _unknown_plugin_arguments(parser, name, unknown)
        cmd.run(parsed)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except (KeyboardInterrupt, Exception) as e:
        from torchx.cli._errors import interrupted, one_line, stop_signal

        signum = stop_signal(e)
        if signum is not None:
            return interrupted(signum, e)
        if debug:
            raise
        print(f"torchx: error: {name}: {one_line(e)}", file=sys.stderr)
        return 2
    return 0


def _unknown_plugin_arguments(
    parser: argparse.ArgumentParser, name: str, unknown: list[str]
) -> int:
    """What ``parse_args`` says of arguments the plugin does not take, except for an option
    of torchx itself written after the command: one line saying where it goes, as for the
    builtin commands."""
    from torchx.cli._errors import misplaced_root_flag

    for token in unknown:
        root = misplaced_root_flag(token, name)
        if root is not None:
            print(f"torchx: error: torchx {name}: got {token!r}; {root}", file=sys.stderr)
            return 2
    parser.error(f"unrecognized arguments: {' '.join(unknown)}")  # exits 2, as parse_args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI on ``argv``; returns the exit code instead of exiting.

    Usage errors (an unknown option, a missing argument) are one line and exit code 2,
    like every other error of the CLI.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    options, name, rest = _split_command(args)
    if name is not None and name not in BUILTIN_COMMANDS:
        plugin = plugin_commands().get(name)
        if plugin is not None:
            return _run_plugin(name, plugin, options, rest)

    from torchx.cli._typer_main import run_builtin

    return run_builtin(args, name)


def run() -> None:
    """Console-script wrapper: exit with main()'s return code.

    Ctrl-C is one line and exit code 130 from here on; the tens of milliseconds before,
    while the console script imports this module, come before any torchx code runs and
    still give Python's traceback.
    """
    try:
        code = main()
    except KeyboardInterrupt:
        # Ctrl-C before a command took charge of it (while its modules load): one line,
        # the shell's code for SIGINT, as the commands themselves answer it
        from torchx.cli._errors import interrupted

        code = interrupted()
    sys.exit(code)


if __name__ == "__main__":
    run()


__all__ = [
    "BLUE",
    "BUILTIN_COMMANDS",
    "CMDS_GROUP",
    "ENDC",
    "GRAY",
    "create_parser",
    "get_default_sub_cmds",
    "get_sub_cmds",
    "load_group",
    "main",
    "plugin_commands",
    "run",
    "run_main",
    "sub_parser_description",
]
