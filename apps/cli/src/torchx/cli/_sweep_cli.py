"""The sweep part of the CLI: ``torchx run --sweep NAME=V1,V2 --parallel K COMPONENT ...``,
``--resume SWEEP``, and a sweep handle (or ``SWEEP/INDEX``) given to status, log, cancel.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NamedTuple

import typer

from torchx.cli._errors import CliError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping
    from typing import Unpack  # Python 3.11+; annotations only, so 3.10 runs this

    from torchx.cli._run import PickScheduler, RunArgs
    from torchx.cli._run_setup import RunSetup
    from torchx.runner import Runner, SweepPlan, SweepStatus, TrialStatus


def sweep_id(handle: str) -> str | None:
    """The id of the sweep ``handle`` names, when its record is here; None for anything
    else, an app named ``sweep`` (whose id has a sweep's shape) included."""
    from torchx.runner import recorded_sweep_id

    return recorded_sweep_id(handle)


def no_such(handle: str) -> str:
    """Why ``handle`` names nothing known: with a sweep's shape it may be a sweep from
    another machine (or mistyped) as well as an app its scheduler does not know."""
    from torchx.runner import sweep_id_of

    if sweep_id_of(handle):
        return "no such sweep here, nor app on its scheduler"
    return "no such app on its scheduler"


def unknown_handle(handle: str) -> str:
    """The one-line error for a ``handle`` that names nothing known, with where the known
    ones are listed."""
    scheduler = handle.partition("://")[0]
    return (
        f"app handle: got {handle!r}; {no_such(handle)}; "
        f"`torchx list -s {scheduler}` lists its apps"
    )


def resolve_trial(target: str, runner: Runner | None = None) -> str:
    """``SCHEDULER://SESSION/sweep-ID/INDEX[/REST]`` as the trial's own app handle (with
    ``/REST`` kept); any other target (an app named ``sweep``'s too) unchanged. A sweep's
    handle or trial written with a trailing ``/`` is refused naming it without, as an app
    handle is: the error names what was typed, never the trial's own handle."""
    scheme, sep, rest = target.partition("://")
    parts = rest.split("/")
    if not sep or len(parts) < 3 or not parts[1].startswith("sweep-"):
        return target
    from torchx.runner import get_runner

    handle = f"{scheme}://{parts[0]}/{parts[1]}"
    if sweep_id(handle) is None:
        return target  # no sweep of that id here: the target names an app and its role
    if target.endswith("/"):
        from torchx.cli._handle_hint import trailing_slash

        raise trailing_slash(target, "sweep handle")
    if not parts[2].isdigit():
        raise CliError(f"trial index: got {parts[2]!r} in {target!r}; give {handle}/INDEX")
    index = int(parts[2])
    trial = (runner or get_runner()).sweep_trial_handle(handle, index)
    if trial is None:
        raise CliError(
            f"trial {index} of {handle} was not submitted (yet); see torchx status {handle}"
        )
    return "/".join([trial, *parts[3:]])


def run_sweep(
    setup: RunSetup,
    pick_scheduler: PickScheduler,
    *,
    sweeps: list[str],
    parallel: int,
    resume: str | None,
    **args: Unpack[RunArgs],
) -> int:
    """Submit (or dry-run) a sweep, or re-run what failed of one; returns the exit code."""
    from torchx.cli._errors import stop_signal
    from torchx.cli._run import (
        LOCAL_SCHEDULERS,
        cancel_on_stop,
        flag,
        parse_cfg,
        resolve_workspace,
        warn_unrecorded_parent,
    )

    component, json_out = args["component"], args["json_out"]

    # A sweep always needs the runner (its config names the default component too).
    runner, defaults = setup.runner, setup.defaults
    # [cli:run] dryrun and wait apply to a sweep as to one app's run
    dryrun = args["dryrun"] or flag(setup, "dryrun", False)
    # read before anything is submitted, so that a bad value stops the sweep from starting;
    # None: neither says, and the scheduler decides below
    wait = flag(setup, "wait", None) if args["wait"] is None else args["wait"]
    if resume is not None:
        if sweeps or component is not None:
            raise CliError(
                "--resume: re-runs a sweep as it was submitted; leave out --sweep and the component"
            )
        from torchx.runner import sweep_id_of

        if sweep_id_of(resume) is None:  # the shape; a missing record is the runner's error
            if resume.endswith("/") and sweep_id_of(resume.rstrip("/")) is not None:
                from torchx.cli._handle_hint import trailing_slash

                raise trailing_slash(resume, "--resume")
            raise CliError(f"--resume: got {resume!r}; {_not_a_sweep(resume)}")
        sched = resume.partition("://")[0]
        _refuse_changes_on_resume(resume, sched, parallel, args)
        if dryrun:
            _print_plan(runner.dryrun_resume_sweep(resume), json_out)
            return 0
        handle = runner.resume_sweep(resume)
    else:
        from torchx.cli._component_args import component_of_command_line
        from torchx.runner import Sweep

        name, argv, schema, parsed = component_of_command_line(
            component, args["component_args"], setup
        )
        if parsed.help:
            typer.echo(schema.help())
            return 0
        sweep = Sweep.from_cli(name, sweeps, argv, parallel)
        sched = pick_scheduler(runner, args["scheduler"], defaults)
        run_cfg = parse_cfg(runner, sched, args["cfg"])
        # The same workspace as ``torchx run``'s (the current directory by default), built
        # once by the runner for every trial.
        workspace = resolve_workspace(
            runner,
            sched,
            run_cfg,
            lambda: runner.component_app(schema, sweep.trial_argv(0)),
            args["workspace"],
            defaults,
        )
        parent_run_id = args["parent_run_id"]
        if dryrun:
            plan = runner.dryrun_sweep(sweep, sched, run_cfg, workspace, parent_run_id)
            warn_unrecorded_parent(runner, parent_run_id, sweep=True)
            _print_plan(plan, json_out)
            return 0
        # Submitting asks the cluster for its limits only if it refuses (one command less).
        handle = runner.run_sweep(sweep, sched, run_cfg, workspace, parent_run_id)
        warn_unrecorded_parent(runner, parent_run_id, sweep=True)
    if wait is None:
        wait = sched in LOCAL_SCHEDULERS
    # From here on a waiting run owns the sweep: a stop (Ctrl-C, SIGTERM) cancels it, as
    # ``torchx run`` cancels its app.
    try:
        # The handle alone on stdout, at once, as for an app (``S=$(torchx run --sweep ...)``).
        if not json_out:
            print(handle, flush=True)
        if not wait:
            if json_out:
                from torchx.cli._output import print_json

                print_json({"handle": handle})
            return 0
        final = runner.wait_sweep(handle, 0.2 if sched in LOCAL_SCHEDULERS else 2.0)
    except (KeyboardInterrupt, Exception) as e:
        signum = stop_signal(e)
        if not wait or signum is None:
            raise
        return cancel_on_stop(runner.cancel_sweep, handle, signum)
    if json_out:
        from torchx.cli._output import print_json

        print_json(sweep_json(final))
    else:
        print(final.format(), file=sys.stderr)
    from torchx.specs import AppState

    return 0 if final.state == AppState.SUCCEEDED else 1


def _not_a_sweep(handle: str) -> str:
    """Why ``handle``, which names no sweep, cannot be resumed, and what to give instead."""
    from torchx.schedulers.sweep_names import SWEEP_ID_FORM
    from torchx.specs import SpecsError, parse_app_handle

    printed = "the sweep handle `torchx run --sweep` printed (SCHEDULER://SESSION/sweep-ID)"
    try:
        app_id = parse_app_handle(handle).app_id
    except SpecsError:
        return f"give {printed}"
    if app_id.startswith("sweep-"):
        return (
            f"{app_id!r} is no sweep id, so no sweep has it: a sweep id is {SWEEP_ID_FORM}; "
            f"give {printed}"
        )
    return f"{app_id!r} is an app's id, not a sweep's; give {printed}"


def _refuse_changes_on_resume(resume: str, sched: str, parallel: int, args: RunArgs) -> None:
    """A resume runs the trials as the sweep recorded them (its scheduler, parallelism,
    run config, workspace and parent run): an option that would change one is refused
    naming it, rather than ignored; ``-s`` naming the sweep's own scheduler changes
    nothing."""
    given = [
        name
        for name, value in (
            ("-s", args["scheduler"] not in (None, sched)),
            ("--parallel", parallel),
            ("--cfg", args["cfg"]),
            ("--workspace", args["workspace"] is not None),
            ("--parent_run_id", args["parent_run_id"] is not None),
        )
        if value
    ]
    if given:
        names = ", ".join(given)
        raise CliError(
            f"--resume: got {names}; a resume runs the trials as {resume} recorded them (on "
            f"{sched}, with its --parallel, --cfg, workspace and parent run): leave out {names},"
            " or start a new sweep with --sweep"
        )


def _print_plan(plan: SweepPlan, json_out: bool) -> None:
    if json_out:
        from torchx.cli._output import print_json

        print_json(
            {
                "handle": plan.handle,
                "mode": plan.record.mode,
                "why": plan.why,
                "trials": [{"index": i, "args": plan.record.trials[i].args} for i in plan.indices],
                "workspace": plan.record.built_workspace or plan.record.workspace,
                "workspace_images": plan.record.images,
                "request": str(plan.request),
            }
        )
        return
    which = ",".join(map(str, plan.indices))
    typer.echo(f"=== SWEEP {plan.handle}: trials {which} of {len(plan.record.trials)} ===")
    typer.echo(f"{plan.record.mode}: {plan.why}")
    for i in plan.indices:
        args = " ".join(f"{k}={v}" for k, v in plan.record.trials[i].args.items())
        typer.echo(f"  trial {i}: {args}")
    workspace = plan.record.built_workspace or plan.record.workspace
    if workspace:
        built = ", ".join(f"{new} (from {old})" for old, new in plan.record.images.items())
        typer.echo(
            f"workspace of every trial: {workspace}" + (f"; built once: {built}" if built else "")
        )
    typer.echo("=== SCHEDULER REQUEST ===")
    typer.echo(str(plan.request))


def sweep_json(st: SweepStatus, unread: Collection[int] | None = None) -> dict[str, Any]:
    """The sweep as JSON. ``unread``: where the objectives were read, the trials left
    unranked because a record of theirs was not; each row then says whether it is one
    (``objective_unread``), which a null ``objective`` alone cannot tell from a trial that
    never recorded it."""
    return {
        "handle": st.handle,
        "state": st.state.name,
        "mode": st.mode,
        "msg": st.msg,
        "trials": [
            {
                "index": t.index,
                "args": t.args,
                "state": t.state.name,
                "attempts": t.attempts,
                "exit_code": t.exit_code,
                "handle": t.handle,
                "msg": t.msg,
                "objective": t.objective,
                **({} if unread is None else {"objective_unread": t.index in unread}),
            }
            for t in st.trials
        ],
    }


class _Unread(Exception):
    """A trial's record that could not be read; its text says which, why and what to fix,
    as the reader knows it (a run's metadata history, a stored document)."""


# The names a misspelt --objective warning lists at most: each trial may record many.
_NAMES_SHOWN = 10


def _objectives(
    st: SweepStatus,
    key: str,
    read: Callable[[TrialStatus], Mapping[str, object] | None],
    named: bool,
) -> set[int]:
    """Each trial's ``key`` from what ``read`` returns for it (None: it recorded nothing).
    A trial whose read raised :class:`_Unread` is left unranked, with a warning: what was
    not read may hold its newest ``key``, and ranking on an older one would mislead.
    A trial whose ``key`` is not a number is unscored, with a warning; the rest still rank.
    When ``named`` (the user chose ``key``) and the trials recorded values but none of
    them ``key``, one line says so and lists what they did record (a misspelt name).
    Returns the indices of the trials left unranked."""
    from torchx.cli._record_skips import warn_line

    unread: set[int] = set()
    recorded: set[str] = set()
    for t in st.trials:
        try:
            values = read(t)
        except _Unread as e:
            warn_line(f"trial {t.index} is left unranked: {e}")
            unread.add(t.index)
            continue
        if values is not None:
            recorded.update(values)
            _set_objective(t, key, values.get(key))
    if named and recorded and key not in recorded:
        names = sorted(recorded)
        more = len(names) - _NAMES_SHOWN
        warn_line(
            f"--objective: no trial recorded {key!r}; they recorded: "
            + ", ".join(names[:_NAMES_SHOWN])
            + (f" and {more} more" if more > 0 else "")
        )
    return unread


def _record_objectives(st: SweepStatus, key: str, named: bool, asked: bool) -> set[int]:
    """Each trial's ``key`` as its run recorded it in the first configured tracker. With
    none configured, a status that ``asked`` for the objective (``--objective``,
    ``--maximize``) says in one line where to configure one; a plain status says nothing."""
    from torchx.cli._record_skips import skips_reported, warn_line
    from torchx.cli._tracker import _tracker

    try:
        tracker = _tracker(None)
    except CliError:
        # A warning, not an error: the trials' states and exit codes are still right, and
        # the trackers the trials recorded to are in their own environment, not here.
        if asked:
            warn_line(
                f"--objective: no tracker is configured here to read {key!r} from; configure"
                " the one the trials recorded to ([torchx:tracker] in .torchxconfig, or"
                " TORCHX_TRACKERS and TORCHX_TRACKER_<NAME>_CONFIG as when the sweep ran), or"
                " give --results URL where they stored result documents"
            )
        return set()
    with skips_reported() as skipped:

        def read(t: TrialStatus) -> Mapping[str, object] | None:
            if t.handle is None:
                return None
            before = len(skipped)
            values = dict(tracker.metadata(t.handle))
            if len(skipped) > before:
                raise _Unread(
                    f"a record of its run {t.handle} was not read (named above), so its {key}"
                    " may not be the one it recorded last; fix that record to rank it"
                )
            return values

        return _objectives(st, key, read, named)


def _result_objectives(st: SweepStatus, key: str, url: str, named: bool) -> set[int]:
    """Each trial's ``key`` from the document it stored at ``url`` under
    :func:`~torchx.runtime.tracking.sweep_trial_key` (one read each, within the
    tracker's size limit); a trial with no document is unscored.

    A document that is there but not readable (:class:`TrackerError`, or a backend's
    error once the URL answered) leaves its trial unranked. A backend's error before
    the URL answered is checked once on the sweep's folder: when that fails too, it is
    the URL's own (no connection, no credentials): it is said once, as ``--results``'s
    error, rather than once (and one more attempt) per trial. Any other exception is a
    bug and is raised as it is."""
    from torchx.runtime.tracking import (
        FsspecResultTracker,
        ResultNotFoundError,
        TrackerError,
        sweep_trial_key,
    )

    try:
        tracker = FsspecResultTracker(url)
    except (ValueError, ImportError, TypeError) as e:
        raise CliError(f"--results: {e}") from None
    backend_errors = _backend_errors()
    reached = False
    found = 0

    def read(t: TrialStatus) -> Mapping[str, object] | None:
        nonlocal reached, found
        key_of_trial = sweep_trial_key(st.handle, t.index)
        document = f"{url.rstrip('/')}/{key_of_trial}.json"
        try:
            values = tracker[key_of_trial]
        except ResultNotFoundError:
            reached = True
            return None
        except TrackerError as e:
            reached = True
            raise _Unread(
                f"its result document was not read ({e}); fix or rewrite {document} to rank it"
            ) from None
        except backend_errors as e:
            if not reached:
                _check_reached(tracker.fs, tracker.path_of(key_of_trial), url, backend_errors)
                reached = True  # the URL answered: this document alone failed
            raise _Unread(
                f"its result document {document} was not read ({_reason(e)}); make it"
                " readable to rank it"
            ) from None
        reached = True
        found += 1
        return values

    unread = _objectives(st, key, read, named)
    if not found and not unread:
        from torchx.cli._record_skips import warn_line

        sweep = st.handle.rpartition("/")[2]
        warn_line(
            f"--results: no trial stored a document under {url.rstrip('/')}/{sweep}/ (is it"
            " the URL the trials wrote to? a trial writes"
            " FsspecResultTracker(URL)[sweep_trial_key()] = {...})"
        )
    return unread


def _backend_errors() -> tuple[type[BaseException], ...]:
    """The errors a storage backend raises for its URL or a document (OSError, and the
    storage clients' own, which are no OSError) of the clients already loaded: a client
    not loaded raised nothing, and importing one here would only cost time."""
    errors: list[type[BaseException]] = [OSError]
    for module, names in (
        ("botocore.exceptions", ("BotoCoreError", "ClientError")),
        ("aiohttp", ("ClientError",)),
        ("gcsfs.retry", ("HttpError",)),
        ("azure.core.exceptions", ("AzureError",)),
    ):
        loaded = sys.modules.get(module)
        errors += [getattr(loaded, name) for name in names if hasattr(loaded, name)]
    return tuple(errors)


def _reason(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _check_reached(
    fs: Any, document: str, url: str, backend_errors: tuple[type[BaseException], ...]
) -> None:
    """CliError naming ``url`` when its sweep's folder (where ``document`` is) cannot be
    listed either: then the URL itself fails, not one document. A folder that is not
    there is an answer: the documents are looked for one by one."""
    try:
        fs.ls(document.rpartition("/")[0], detail=False)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except backend_errors as e:
        raise CliError(f"--results: {url}: {_reason(e)}") from None


def _set_objective(t: TrialStatus, key: str, value: object) -> None:
    """The trial's objective from its recorded ``value`` (``TrialStatus.score``); a value
    that is no finite number leaves it unscored with a warning (results may be strings,
    e.g. 'nan' or 'diverged')."""
    t.score(value)
    if value is not None and t.objective is None:  # rank() puts it last: say why
        from torchx.cli._record_skips import warn_line

        warn_line(
            f"trial {t.index} is left unscored: it recorded {key}={value!r}, not a finite"
            f" number; record a number as {key} to rank it (or give --objective a numeric"
            " field)"
        )


class Ranking(NamedTuple):
    """What ranks a sweep's trials, as ``status``, ``status --watch`` and ``describe``
    take it: the recorded value (``--objective``; None: ``objective``), whether the
    highest is best (``--maximize``), and where the trials stored it (``--results``, a
    result tracker's URL; None: their runs' metadata in the configured tracker)."""

    objective: str | None = None
    maximize: bool = False
    results: str | None = None

    @property
    def key(self) -> str:
        return self.objective or "objective"


# the ranking of a status that names none: by the recorded ``objective``, lowest first
DEFAULT_RANKING = Ranking()


def print_status(
    runner: Runner, handle: str, json_out: bool, ranking: Ranking = DEFAULT_RANKING
) -> None:
    """The sweep's trials, as :func:`scored_status` reads and ranks them."""
    st, unread = scored_status(runner, handle, ranking)
    if json_out:
        from torchx.cli._output import print_json

        print_json(sweep_json(st, unread))
        return
    typer.echo(st.format(ranking.key))


def scored_status(runner: Runner, handle: str, ranking: Ranking) -> tuple[SweepStatus, set[int]]:
    """The sweep's status, its trials best first by ``ranking``, and the trials left
    unranked because a record of theirs was not read."""
    st = runner.sweep_status(handle)
    # A misspelt name is said where the user named it, or asked for the stored results.
    named = ranking.objective is not None
    if ranking.results is not None:
        unread = _result_objectives(st, ranking.key, ranking.results, True)
    else:
        unread = _record_objectives(st, ranking.key, named, named or ranking.maximize)
    if any(t.objective is not None for t in st.trials):
        st.rank(ranking.maximize)
    return st, unread


def cancel(runner: Runner, handle: str) -> None:
    before = runner.sweep_status(handle)
    if before.is_terminal():
        typer.echo(f"{handle} was not running: it had already ended as {before.state.name}")
        return
    runner.cancel_sweep(handle)
    typer.echo(f"cancelled {handle}")
