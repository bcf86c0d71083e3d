"""``torchx describe`` as a SubCommand."""

from __future__ import annotations

import argparse
import dataclasses
import pprint

from torchx.cli.cmd_base import SubCommand, _known_or_exit
from torchx.runner import get_runner
from torchx.specs import parse_app_handle


class CmdDescribe(SubCommand):
    """Print the AppDef an app was launched with (exit code 1 when its scheduler does not
    know the app)."""

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("app_handle", type=str, help="SCHEDULER://SESSION/APP_ID")

    def run(self, args: argparse.Namespace) -> None:
        parse_app_handle(args.app_handle)  # a malformed handle fails before any lookup
        app = _known_or_exit(args.app_handle, get_runner().describe(args.app_handle))
        pprint.pprint(dataclasses.asdict(app), indent=2, width=80)


__all__ = ["CmdDescribe"]
