"""``torchx configure`` as a SubCommand."""

from __future__ import annotations

import argparse

from torchx.cli._subcommand import CliCommand, option, switch


class CmdConfigure(CliCommand):
    """Write a ``.torchxconfig`` with the schedulers' run options."""

    name = "configure"

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument(
            "-s", "--schedulers", type=str, help="schedulers to write, comma separated"
        )
        subparser.add_argument("--print", action="store_true", help="print instead of writing")
        subparser.add_argument(
            "-a", "--all", action="store_true", help="every option, not only required ones"
        )
        subparser.add_argument("--force", action="store_true", help="overwrite an existing file")

    def argv(self, args: argparse.Namespace) -> list[str]:
        return [
            *option(args, "schedulers", "-s"),
            *switch(args, "print", "--print"),
            *switch(args, "all", "--all"),
            *switch(args, "force", "--force"),
        ]


__all__ = ["CmdConfigure"]
