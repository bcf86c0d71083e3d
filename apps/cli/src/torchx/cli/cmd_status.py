"""``torchx status`` as a SubCommand."""

from __future__ import annotations

import argparse

from torchx.cli._subcommand import CliCommand, option


def parse_list_arg(arg: str) -> list[str] | None:
    """``"a,b"`` -> ``["a", "b"]``; an empty string -> None (no filter)."""
    return arg.split(",") if arg else None


class CmdStatus(CliCommand):
    """Show an app's state: ``torchx status HANDLE [--roles a,b]``."""

    name = "status"

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("app_handle", type=str, help="SCHEDULER://SESSION/APP_ID")
        subparser.add_argument(
            "--roles", type=str, default="", help="only these roles, comma separated"
        )

    def argv(self, args: argparse.Namespace) -> list[str]:
        return [args.app_handle, *option(args, "roles", "--roles")]


__all__ = ["CmdStatus", "parse_list_arg"]
