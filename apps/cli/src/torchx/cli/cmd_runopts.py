"""``torchx runopts`` as a SubCommand."""

from __future__ import annotations

import argparse

from torchx.cli._subcommand import CliCommand
from torchx.cli.colors import ENDC, GREEN


class CmdRunopts(CliCommand):
    """Show the run options of one scheduler or all: ``torchx runopts [SCHEDULER]``."""

    name = "runopts"

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument(
            "scheduler", type=str, nargs="?", help="one scheduler (default: all)"
        )

    def argv(self, args: argparse.Namespace) -> list[str]:
        return [args.scheduler] if getattr(args, "scheduler", None) else []


__all__ = ["ENDC", "GREEN", "CmdRunopts"]
