"""``torchx list`` as a SubCommand."""

from __future__ import annotations

import argparse

from torchx.cli._subcommand import CliCommand, option

# The column titles of the table ``torchx list`` prints.
HANDLE_HEADER = "APP HANDLE"
STATUS_HEADER = "APP STATUS"


class CmdList(CliCommand):
    """List a scheduler's apps: ``torchx list [-s SCHEDULER]``."""

    name = "list"

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument(
            "-s", "--scheduler", type=str, default=None, help="scheduler (default: local_cwd)"
        )

    def argv(self, args: argparse.Namespace) -> list[str]:
        return option(args, "scheduler", "-s")


__all__ = ["HANDLE_HEADER", "STATUS_HEADER", "CmdList"]
