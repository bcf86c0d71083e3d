"""``torchx cancel`` as a SubCommand."""

from __future__ import annotations

import argparse

from torchx.cli._subcommand import CliCommand


class CmdCancel(CliCommand):
    """Stop an app: ``torchx cancel HANDLE``."""

    name = "cancel"

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("app_handle", type=str, help="SCHEDULER://SESSION/APP_ID")

    def argv(self, args: argparse.Namespace) -> list[str]:
        return [args.app_handle]


__all__ = ["CmdCancel"]
