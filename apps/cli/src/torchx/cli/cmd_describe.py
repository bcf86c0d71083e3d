"""``torchx describe`` as a SubCommand."""

from __future__ import annotations

import argparse

from torchx.cli._subcommand import CliCommand


class CmdDescribe(CliCommand):
    """Show the AppDef an app was launched with: ``torchx describe HANDLE``."""

    name = "describe"

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("app_handle", type=str, help="SCHEDULER://SESSION/APP_ID")

    def argv(self, args: argparse.Namespace) -> list[str]:
        return [args.app_handle]


__all__ = ["CmdDescribe"]
