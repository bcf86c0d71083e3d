"""The builtin commands (the typer app) run on a command line, errors as one line.

Apart from ``main`` so that what runs a builtin command (``main`` and the 0.7-style
``SubCommand`` objects of ``_subcommand``) needs no import of the module that lists them.
"""

from __future__ import annotations

import sys


def run_builtin(args: list[str]) -> int:
    """Run ``torchx ARGS`` with the builtin commands; returns the exit code.

    Usage errors (an unknown option, a missing argument) are one line and exit code 2,
    like every other error of the CLI.
    """
    import click
    import typer.main

    from torchx.cli._app import app

    command = typer.main.get_command(app)
    try:
        result = command.main(args=args, prog_name="torchx", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as e:
        print(e.ctx.get_help() if e.ctx else str(e))
        return 0
    except click.UsageError as e:
        hint = f" (see '{e.ctx.command_path} --help')" if e.ctx and e.ctx.parent else ""
        if e.ctx and not e.ctx.parent:
            hint = " (see 'torchx --help')"
        print(f"torchx: error: {e.format_message()}{hint}", file=sys.stderr)
        return 2
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.Abort:
        print("torchx: aborted", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else 0
