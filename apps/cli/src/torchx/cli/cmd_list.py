"""``torchx list`` as a SubCommand."""

from __future__ import annotations

import argparse

from torchx.cli._output import print_table
from torchx.cli.cmd_base import SubCommand
from torchx.runner import get_runner
from torchx.schedulers import get_default_scheduler_name

# The column titles of the table this command prints.
HANDLE_HEADER = "APP HANDLE"
STATUS_HEADER = "APP STATUS"


class CmdList(SubCommand):
    """List a scheduler's apps as a table of handles and states."""

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument(
            "-s",
            "--scheduler",
            type=str,
            default=get_default_scheduler_name(),
            help="the scheduler to ask (default: local_cwd)",
        )

    def run(self, args: argparse.Namespace) -> None:
        with get_runner() as runner:
            apps = runner.list(args.scheduler)
        print_table(
            [HANDLE_HEADER, STATUS_HEADER], [[str(a.app_handle), str(a.state)] for a in apps]
        )


__all__ = ["HANDLE_HEADER", "STATUS_HEADER", "CmdList"]
