"""``torchx describe`` as a SubCommand."""

from __future__ import annotations

import argparse
import dataclasses
import pprint
import sys

from torchx.cli.cmd_base import SubCommand
from torchx.runner import get_runner
from torchx.specs import parse_app_handle


class CmdDescribe(SubCommand):
    """Print the AppDef an app was launched with (exit code 1 when its scheduler does not
    know the app)."""

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("app_handle", type=str, help="SCHEDULER://SESSION/APP_ID")

    def run(self, args: argparse.Namespace) -> None:
        scheduler, _, app_id = parse_app_handle(args.app_handle)
        app = get_runner().describe(args.app_handle)
        if app is None:
            print(f"torchx: error: {scheduler} does not know app {app_id!r}", file=sys.stderr)
            sys.exit(1)
        pprint.pprint(dataclasses.asdict(app), indent=2, width=80)


__all__ = ["CmdDescribe"]
