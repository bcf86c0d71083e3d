"""``torchx tracker``: read what apps recorded through ``torchx.tracker.AppRun``.

The trackers are those of ``[torchx:tracker]`` in ``.torchxconfig`` (the same the runner
hands to apps); the first one answers unless ``--tracker NAME`` picks another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from torchx.cli._errors import CliError
from torchx.cli._handled import handled
from torchx.cli._record_skips import printable, skips_reported_by

if TYPE_CHECKING:
    from torchx.tracker import TrackerBase

tracker_app = typer.Typer(
    help="Read what apps recorded with torchx.tracker: runs, metadata, artifacts, lineage.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
list_app = typer.Typer(help="List experiments, jobs, or one run's records.", no_args_is_help=True)
tracker_app.add_typer(list_app, name="list")

JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
TrackerOpt = Annotated[
    str | None,
    typer.Option("--tracker", help="which [torchx:tracker] entry to read (default: the first)"),
]
RunIdArg = Annotated[str, typer.Argument(metavar="RUN_ID", help="the run (an app handle)")]
ArtifactOpt = Annotated[
    str | None, typer.Option("--artifact", help="only this artifact", show_default=False)
]


def _tracker(name: str | None) -> TrackerBase:
    """The configured tracker ``name`` (default: the first)."""
    from torchx.runner import load_config, trackers_env
    from torchx.tracker import ENV_TORCHX_TRACKERS, trackers_from_environ

    env = trackers_env(load_config().trackers())
    names = [n for n in env.get(ENV_TORCHX_TRACKERS, "").split(",") if n]
    if not names:
        raise CliError(
            "tracker: none configured; add a [torchx:tracker] section to .torchxconfig,"
            " e.g. 'fsspec=fsspec' with [tracker:fsspec] config=/tmp/torchx_runs"
        )
    chosen = name or names[0]
    if chosen not in names:
        raise CliError(f"--tracker: got {chosen!r}; configured trackers: {', '.join(names)}")
    env[ENV_TORCHX_TRACKERS] = chosen
    return trackers_from_environ(env)[0]


def _print_json(data: Any) -> None:
    from torchx.cli._output import print_json

    print_json(data)


def _table(header: list[str], rows: list[list[str]]) -> None:
    from torchx.cli._output import print_table

    print_table(header, [[printable(cell) for cell in row] for row in rows])


def _show(value: object) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value)


@list_app.command("experiments")
def list_experiments(tracker: TrackerOpt = None, json_out: JsonOpt = False) -> None:
    """List the experiments runs are grouped in."""
    handled(skips_reported_by(_list_experiments))(tracker, json_out)


def _list_experiments(tracker: str | None, json_out: bool) -> None:
    backend = _tracker(tracker)
    names = list(backend.experiments())
    if not names:
        _explain_empty(backend)
    if json_out:
        _print_json([{"experiment": n} for n in names])
        return
    _table(["EXPERIMENT"], [[n] for n in names])


@list_app.command("jobs")
def list_jobs(
    parent_run_id: Annotated[
        str | None,
        typer.Option("--parent-run-id", "--parent_run_id", help="only runs derived from this one"),
    ] = None,
    experiment: Annotated[
        str | None, typer.Option("--experiment", help="only runs of this experiment")
    ] = None,
    tracker: TrackerOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """List the recorded runs (job ids)."""
    handled(skips_reported_by(_list_jobs))(parent_run_id, experiment, tracker, json_out)


def _list_jobs(
    parent_run_id: str | None, experiment: str | None, tracker: str | None, json_out: bool
) -> None:
    filters = {"parent_run_id": parent_run_id, "experiment": experiment}
    backend = _tracker(tracker)
    run_ids = list(backend.run_ids(**{k: v for k, v in filters.items() if v}))
    if not run_ids:
        _explain_empty(backend)
    if json_out:
        _print_json([{"job_id": r} for r in run_ids])
        return
    _table(["JOB ID"], [[r] for r in run_ids])


@list_app.command("metadata")
def list_metadata(run_id: RunIdArg, tracker: TrackerOpt = None, json_out: JsonOpt = False) -> None:
    """Show the metadata a run recorded."""
    handled(skips_reported_by(_list_metadata))(run_id, tracker, json_out)


def _explain_empty(trk: TrackerBase, run_id: str | None = None) -> None:
    """For an empty answer, one line on stderr saying why, leaving stdout and the exit
    code as they were: the tracker's store does not exist yet (a freshly configured
    tracker, or a mistyped URL: either way the line names it), else, for one run's
    records, that the run itself is unknown (a typo, another tracker). The runs are read
    as a stream that stops at ``run_id``; a tracker failing to answer gets no line, and
    the empty answer stands."""
    try:
        note = trk.missing_store_note()
        if note is None and run_id is not None and not any(r == run_id for r in trk.run_ids()):
            note = (
                f"run {run_id!r}: nothing is recorded under it; `torchx tracker list jobs`"
                " lists the runs"
            )
    except Exception:  # only a hint: a tracker's failure here must not fail the listing
        return
    if note is not None:
        typer.echo(f"torchx: warning: {note}", err=True)


def _list_metadata(run_id: str, tracker: str | None, json_out: bool) -> None:
    trk = _tracker(tracker)
    metadata = dict(trk.metadata(run_id))
    if not metadata:
        _explain_empty(trk, run_id)
    if json_out:
        _print_json({"run_id": run_id, "metadata": metadata})
        return
    _table(["KEY", "VALUE"], [[k, _show(v)] for k, v in metadata.items()])


@list_app.command("artifacts")
def list_artifacts(
    run_id: RunIdArg,
    artifact: ArtifactOpt = None,
    tracker: TrackerOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show the artifacts a run recorded."""
    handled(skips_reported_by(_list_artifacts))(run_id, artifact, tracker, json_out)


def _list_artifacts(run_id: str, artifact: str | None, tracker: str | None, json_out: bool) -> None:
    trk = _tracker(tracker)
    everything = list(trk.artifacts(run_id).values())
    if not everything:
        _explain_empty(trk, run_id)
    found = [a for a in everything if artifact in (None, a.name)]
    if json_out:
        _print_json([{"name": a.name, "path": a.path, "metadata": a.metadata} for a in found])
        return
    _table(
        ["ARTIFACT", "PATH", "METADATA"],
        [[a.name, a.path, _show(a.metadata) if a.metadata else ""] for a in found],
    )


@list_app.command("lineage")
def list_lineage(
    run_id: RunIdArg,
    sources_only: Annotated[bool, typer.Option("--sources-only", help="only sources")] = False,
    descendants_only: Annotated[
        bool, typer.Option("--descendants-only", help="only descendants")
    ] = False,
    artifact: ArtifactOpt = None,
    tracker: TrackerOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show where a run comes from (sources) and which runs derive from it (descendants)."""
    handled(skips_reported_by(_list_lineage))(
        run_id, sources_only, descendants_only, artifact, tracker, json_out
    )


def _list_lineage(
    run_id: str,
    sources_only: bool,
    descendants_only: bool,
    artifact: str | None,
    tracker: str | None,
    json_out: bool,
) -> None:
    if sources_only and descendants_only:
        raise CliError("--sources-only and --descendants-only: give one of them, not both")
    from torchx.tracker import lineage_of

    trk = _tracker(tracker)
    lineage = lineage_of(trk, run_id)
    if not lineage.sources and not lineage.descendants:
        _explain_empty(trk, run_id)
    rows: list[dict[str, Any]] = []
    if not descendants_only:
        rows += [
            {"relation": "source", "run_id": s.source_run_id, "artifact": s.artifact_name}
            for s in lineage.sources
        ]
    if not sources_only:
        rows += [
            {"relation": "descendant", "run_id": d.run_id, "artifact": d.artifact_name}
            for d in lineage.descendants
        ]
    if artifact is not None:
        rows = [r for r in rows if r["artifact"] == artifact]
    if json_out:
        _print_json({"run_id": run_id, "lineage": rows})
        return
    _table(
        ["RELATION", "RUN ID", "ARTIFACT"],
        [[r["relation"], r["run_id"], r["artifact"] or ""] for r in rows],
    )
