"""The builtin commands (the typer app) run on a command line, errors as one line.

Apart from ``main`` so that what runs a builtin command (``main`` and the 0.7-style
``SubCommand`` objects of ``_subcommand``) needs no import of the module that lists them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from torchx.cli._errors import misplaced_root_flag

if TYPE_CHECKING:
    import click
    import typer


def _only(app: typer.Typer, args: list[str], name: str | None) -> typer.Typer:
    """``app`` with only the command ``name`` that ``args`` run (and the root options), or
    ``app`` itself when no builtin command has that name or ``args`` ask for the help of
    ``torchx`` itself.

    Typer builds every command's options from its signature before parsing the command
    line, which costs start-up time in proportion to all the commands; one command line
    runs one command, so only that one is built (the full app serves ``torchx --help``,
    an unknown name's error and shell completion).
    """
    import copy
    import os

    import typer.main

    if name is None or name not in args or "_TORCHX_COMPLETE" in os.environ:
        return app
    if {"-h", "--help"} & set(args[: args.index(name)]):
        return app
    commands = [
        info
        for info in app.registered_commands
        if name
        == (info.name or typer.main.get_command_name(getattr(info.callback, "__name__", "")))
    ]
    groups = [info for info in app.registered_groups if info.name == name]
    if not commands and not groups:
        return app
    trimmed = copy.copy(app)
    trimmed.registered_commands = commands
    trimmed.registered_groups = groups
    return trimmed


def run_builtin(args: list[str], name: str | None = None) -> int:
    """Run ``torchx ARGS`` with the builtin commands; returns the exit code.

    Usage errors (an unknown option, a missing argument) are one line and exit code 2,
    like every other error of the CLI. ``name`` is the command that ``args`` names, if
    known: then only that command is built.
    """
    import click
    import typer.main

    from torchx.cli._app import app

    command = typer.main.get_command(_only(app, args, name))
    invoke = command.invoke

    def invoke_saying_interrupt(ctx: click.Context) -> Any:
        try:
            return invoke(ctx)
        except (KeyboardInterrupt, Exception) as e:
            # typer turns Ctrl-C into exit code 130 with nothing said, which reads the
            # same as a command's own 130, and SIGTERM would be an error: say it here, for
            # every command, as the early path does
            from torchx.cli._errors import interrupted, stop_signal

            signum = stop_signal(e)
            if signum is None:
                raise
            raise click.exceptions.Exit(interrupted(signum, e)) from None

    command.invoke = invoke_saying_interrupt  # type: ignore[method-assign]
    try:
        result = command.main(args=args, prog_name="torchx", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as e:
        print(e.ctx.get_help() if e.ctx else str(e))
        # ``torchx`` alone ran nothing: exit 1, as pytorch/torchx 0.7 does, so a script
        # whose command word came out empty does not read as a success
        return 1 if e.ctx is not None and e.ctx.parent is None else 0
    except click.UsageError as e:
        print(f"torchx: error: {_usage_error(e)}", file=sys.stderr)
        return 2
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.Abort:
        print("torchx: aborted", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else 0


def _usage_error(e: click.UsageError) -> str:
    """The one line for a command line click refused: where a misplaced option of torchx
    itself goes (``torchx status --debug``), else click's message and where help is."""
    import click

    ctx = e.ctx
    if isinstance(e, click.NoSuchOption) and ctx is not None and ctx.parent is not None:
        command = ctx.command_path.partition(" ")[2]  # "status", "tracker list jobs"
        root = misplaced_root_flag(e.option_name, command)
        if root is not None:
            return f"{ctx.command_path}: got {e.option_name!r}; {root}"
    if ctx is not None and ctx.parent is not None:
        return f"{e.format_message()} (see '{ctx.command_path} --help')"
    return e.format_message() + (" (see 'torchx --help')" if ctx is not None else "")
