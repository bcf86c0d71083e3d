"""``torchx tracker`` as a SubCommand."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from torchx.cli._subcommand import CliCommand, option, switch

if TYPE_CHECKING:
    from torchx.tracker import TrackerBase


class CmdTracker(CliCommand):
    """Query the configured tracker: ``torchx tracker list jobs|metadata|artifacts|lineage``."""

    name = "tracker"

    @property
    def tracker(self) -> TrackerBase:
        """The first tracker configured in ``[torchx:tracker]`` (or ``TORCHX_TRACKERS``)."""
        from torchx.runner import get_configured_trackers
        from torchx.tracker import build_trackers

        for tracker in build_trackers(get_configured_trackers()):
            return tracker
        raise ValueError(
            "no tracker configured: add a [torchx:tracker] section to .torchxconfig "
            "(for example `fsspec = fsspec` and [tracker:fsspec] config=PATH)"
        )

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        commands = subparser.add_subparsers(dest="tracker_command", required=True)
        listing = commands.add_parser("list", help="list jobs or one run's records")
        kinds = listing.add_subparsers(dest="list_kind", required=True)
        jobs = kinds.add_parser("jobs", help="the run ids")
        jobs.add_argument("--parent-run-id", type=str, help="only runs derived from this one")
        jobs.add_argument("--experiment", type=str, help="only runs of this experiment")
        kinds.add_parser("experiments", help="the experiments")
        metadata = kinds.add_parser("metadata", help="a run's metadata")
        metadata.add_argument("RUN_ID", type=str, help="the run id")
        artifacts = kinds.add_parser("artifacts", help="a run's artifacts")
        artifacts.add_argument("--artifact", type=str, help="only this artifact")
        artifacts.add_argument("RUN_ID", type=str, help="the run id")
        lineage = kinds.add_parser("lineage", help="a run's sources and descendants")
        only = lineage.add_mutually_exclusive_group()
        only.add_argument("--sources-only", action="store_true", help="only sources")
        only.add_argument("--descendants-only", action="store_true", help="only descendants")
        lineage.add_argument("--artifact", type=str, help="only this artifact")
        lineage.add_argument("RUN_ID", type=str, help="the run id")

    def argv(self, args: argparse.Namespace) -> list[str]:
        kind = args.list_kind
        out = ["list", kind]
        if kind == "jobs":
            out += option(args, "parent_run_id", "--parent-run-id")
            out += option(args, "experiment", "--experiment")
        elif kind in ("metadata", "artifacts", "lineage"):
            out += option(args, "artifact", "--artifact")
            out += switch(args, "sources_only", "--sources-only")
            out += switch(args, "descendants_only", "--descendants-only")
            out.append(args.RUN_ID)
        return out


__all__ = ["CmdTracker"]
