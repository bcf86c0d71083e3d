"""The builtin commands as :class:`~torchx.cli.cmd_base.SubCommand` objects.

Each takes pytorch/torchx 0.7's arguments and runs the same code as ``torchx NAME ...``
does, by handing the parsed arguments back to the CLI as a command line.
"""

from __future__ import annotations

import abc
import argparse
import sys

from torchx.cli.cmd_base import SubCommand


class CliCommand(SubCommand):
    """A builtin command: ``run`` is ``torchx NAME`` with ``argv(args)``; a non-zero exit
    code ends the process (``SystemExit``), as 0.7's commands did."""

    name: str = ""

    @abc.abstractmethod
    def argv(self, args: argparse.Namespace) -> list[str]:
        """The command line after ``torchx NAME`` that ``args`` stand for."""

    def run(self, args: argparse.Namespace) -> None:
        from torchx.cli._typer_main import run_builtin

        code = run_builtin([self.name, *self.argv(args)], self.name)
        if code:
            sys.exit(code)


def option(args: argparse.Namespace, dest: str, flag: str) -> list[str]:
    """``[flag, value]`` when ``args.<dest>`` is set, else nothing."""
    value = getattr(args, dest, None)
    return [flag, str(value)] if value not in (None, "") else []


def switch(args: argparse.Namespace, dest: str, flag: str) -> list[str]:
    return [flag] if getattr(args, dest, False) else []
