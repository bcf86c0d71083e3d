"""``torchx run`` and ``torchx builtins`` as SubCommands."""

from __future__ import annotations

import argparse
import os
import sys

from torchx.cli._subcommand import CliCommand, option, switch
from torchx.cli.argparse_util import torchxconfig_run

MISSING_COMPONENT_ERROR_MSG = (
    "missing component name: give it on the command line (torchx run COMPONENT ...) or as "
    "`component = NAME` in the [cli:run] section of .torchxconfig"
)


class CmdBuiltins(CliCommand):
    """List the builtin components, or print one's source with ``--print NAME``."""

    name = "builtins"

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("--print", type=str, help="print the source of this component")

    def argv(self, args: argparse.Namespace) -> list[str]:
        return option(args, "print", "--print")


class CmdRun(CliCommand):
    """Run a component: ``torchx run [-s SCHED] [-cfg K=V,...] COMPONENT [ARGS...]``.

    Without a component on the command line (nothing, or the component's own ``--flags``
    first), the one named by ``component`` in ``[cli:run]`` of ``.torchxconfig`` is run.
    """

    name = "run"

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument(
            "-s",
            "--scheduler",
            type=str,
            action=torchxconfig_run,
            help="scheduler (default: local_cwd)",
        )
        subparser.add_argument(
            "-cfg",
            "--scheduler_args",
            type=str,
            action=torchxconfig_run,
            help="run options: k1=v1,k2=v2",
        )
        subparser.add_argument(
            "--dryrun", action="store_true", default=False, help="print the request only"
        )
        subparser.add_argument(
            "--wait", action="store_true", default=False, help="wait for the app to end"
        )
        subparser.add_argument(
            "--log", action="store_true", default=False, help="stream its logs while waiting"
        )
        subparser.add_argument(
            "--workspace",
            "--buck-target",
            type=str,
            action=torchxconfig_run,
            help="directory built into the app (default: the current directory on "
            'workspace schedulers; "" for none)',
        )
        subparser.add_argument("--parent_run_id", type=str, help="the run this one derives from")
        subparser.add_argument(
            "component_name_and_args",
            nargs=argparse.REMAINDER,
            help="COMPONENT [ARGS...]: a builtin, path/to/file.py:fn, or an entry point",
        )

    def argv(self, args: argparse.Namespace) -> list[str]:
        rest = list(getattr(args, "component_name_and_args", None) or [])
        if not rest or rest[0].startswith("-"):
            from torchx.runner.config import get_configs

            component = get_configs(prefix="cli", name="run").get("component")
            if not component:
                print(f"torchx: error: {MISSING_COMPONENT_ERROR_MSG}", file=sys.stderr)
                sys.exit(2)
            rest.insert(0, component)
        return [
            *option(args, "scheduler", "-s"),
            *option(args, "scheduler_args", "-cfg"),
            *switch(args, "dryrun", "--dryrun"),
            # As in 0.7: local schedulers are always waited for, others with --wait or --log.
            *(["--wait"] if getattr(args, "wait", False) or getattr(args, "log", False) else []),
            *switch(args, "log", "--log"),
            # "" is passed on: it turns the default workspace off, as in 0.7
            *([] if (ws := getattr(args, "workspace", None)) is None else ["--workspace", ws]),
            *option(args, "parent_run_id", "--parent_run_id"),
            *rest,
        ]

    def run(self, args: argparse.Namespace) -> None:
        # Tells what started the launch; a value set by the caller is kept.
        os.environ.setdefault("TORCHX_CONTEXT_NAME", "cli_run")
        super().run(args)


__all__ = ["MISSING_COMPONENT_ERROR_MSG", "CmdBuiltins", "CmdRun"]
