"""``torchx tracker`` as a SubCommand: ``list jobs|metadata|artifacts|lineage``, read from
the first tracker configured in ``[torchx:tracker]`` (or ``TORCHX_TRACKERS``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from torchx.cli._output import print_table
from torchx.cli._record_skips import skips_reported_by
from torchx.cli.cmd_base import SubCommand
from torchx.runner import get_configured_trackers
from torchx.tracker import build_trackers, lineage_of

if TYPE_CHECKING:
    from torchx.tracker import TrackerBase


class CmdTracker(SubCommand):
    """Each ``list`` kind is its own parser whose ``func`` default is the method that
    answers it, so ``args.func(args)`` runs it (as 0.7's CLI does)."""

    @property
    def tracker(self) -> TrackerBase:
        """The first configured tracker; RuntimeError when none is configured."""
        for tracker in build_trackers(get_configured_trackers()):
            return tracker
        raise RuntimeError(
            "no tracker configured: add a [torchx:tracker] section to .torchxconfig "
            "(for example `fsspec = fsspec` with [tracker:fsspec] config=PATH)"
        )

    def list_jobs_command(self, args: argparse.Namespace) -> None:
        filters = {"parent_run_id": args.parent_run_id} if args.parent_run_id else {}
        print_table(["JOB ID"], [[str(r)] for r in self.tracker.run_ids(**filters)])

    def list_metadata_command(self, args: argparse.Namespace) -> None:
        data = self.tracker.metadata(args.RUN_ID)
        print_table(["ID", "VALUE"], [[str(k), str(v)] for k, v in data.items()])

    def list_artifacts_command(self, args: argparse.Namespace) -> None:
        found = list(self.tracker.artifacts(args.RUN_ID).values())
        if args.artifact:
            found = [a for a in found if a.name == args.artifact]
        print_table(
            ["ARTIFACT", "PATH", "METADATA"], [[a.name, a.path, str(a.metadata)] for a in found]
        )

    def job_lineage_command(self, args: argparse.Namespace) -> None:
        lineage = lineage_of(self.tracker, args.RUN_ID)
        rows: list[list[str]] = []
        if not args.descendants_only:
            rows += [["source", s.source_run_id, s.artifact_name or ""] for s in lineage.sources]
        if not args.sources_only:
            rows += [["descendant", d.run_id, d.artifact_name or ""] for d in lineage.descendants]
        if args.artifact:
            rows = [r for r in rows if r[2] == args.artifact]
        print_table(["RELATION", "RUN ID", "ARTIFACT"], rows)

    # One method per ``list`` kind adds its arguments (0.7's names, for subclasses).
    def add_list_job_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("--parent-run-id", type=str, help="only runs derived from this one")

    def add_metadata_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("RUN_ID", type=str, help="the run id")

    def add_artifacts_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("--artifact", type=str, help="only this artifact")
        subparser.add_argument("RUN_ID", type=str, help="the run id")

    def add_job_lineage_arguments(self, subparser: argparse.ArgumentParser) -> None:
        only = subparser.add_mutually_exclusive_group()
        only.add_argument("--sources-only", action="store_true", help="only sources")
        only.add_argument("--descendants-only", action="store_true", help="only descendants")
        self.add_artifacts_arguments(subparser)

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        commands = subparser.add_subparsers(description="query what the tracker recorded")
        listing = commands.add_parser("list", help="list jobs or one run's records")
        kinds = listing.add_subparsers(description="what to list")
        for name, help, add, func in (
            ("jobs", "the run ids", self.add_list_job_arguments, self.list_jobs_command),
            (
                "metadata",
                "a run's metadata",
                self.add_metadata_arguments,
                self.list_metadata_command,
            ),
            (
                "artifacts",
                "a run's artifacts",
                self.add_artifacts_arguments,
                self.list_artifacts_command,
            ),
            (
                "lineage",
                "a run's sources and descendants",
                self.add_job_lineage_arguments,
                self.job_lineage_command,
            ),
        ):
            parser = kinds.add_parser(name, help=help)
            # a record a read skipped: one line, as `torchx tracker` prints it. Set before
            # the hook, as 0.7 did, so a subclass's own ``set_defaults(func=...)`` wins.
            parser.set_defaults(func=skips_reported_by(func))
            add(parser)

    def run(self, args: argparse.Namespace) -> None:
        handler = getattr(args, "func", None)
        if handler is None or handler == self.run:
            raise ValueError("tracker: name what to list: torchx tracker list jobs|metadata|...")
        handler(args)


__all__ = ["CmdTracker"]
