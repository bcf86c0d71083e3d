"""``torchx cancel`` as a SubCommand."""

from __future__ import annotations

import argparse

from torchx.cli.cmd_base import SubCommand
from torchx.runner import get_runner


class CmdCancel(SubCommand):
    """Stop an app: ``Runner.cancel(HANDLE)`` (a no-op for an app that already ended)."""

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("app_handle", type=str, help="SCHEDULER://SESSION/APP_ID")

    def run(self, args: argparse.Namespace) -> None:
        get_runner().cancel(args.app_handle)


__all__ = ["CmdCancel"]
