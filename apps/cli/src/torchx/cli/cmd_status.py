"""``torchx status`` as a SubCommand."""

from __future__ import annotations

import argparse

from torchx.cli.cmd_base import SubCommand, _known_or_exit
from torchx.runner import get_runner
from torchx.specs import parse_app_handle


def parse_list_arg(arg: str) -> list[str] | None:
    """``"a,b"`` -> ``["a", "b"]``; an empty string -> None (no filter)."""
    return arg.split(",") if arg else None


class CmdStatus(SubCommand):
    """Print an app's status, optionally of some roles only (exit code 1 when its
    scheduler does not know the app)."""

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("app_handle", type=str, help="SCHEDULER://SESSION/APP_ID")
        subparser.add_argument(
            "--roles", type=str, default="", help="only these roles, comma separated"
        )

    def run(self, args: argparse.Namespace) -> None:
        parse_app_handle(args.app_handle)  # a malformed handle fails before any lookup
        status = _known_or_exit(args.app_handle, get_runner().status(args.app_handle))
        print(status.format(parse_list_arg(args.roles)))


__all__ = ["CmdStatus", "parse_list_arg"]
