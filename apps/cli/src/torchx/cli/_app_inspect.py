"""The commands that look at submitted apps without changing them: ``status``,
``describe``, ``log``, ``wait`` and ``list`` (of a sweep: its trials).
"""

# No ``from __future__ import annotations``, as in ``_app``: typer reads each command's
# signature on every start, and string annotations would be evaluated each time.

from typing import Annotated, Any

import typer

from torchx.cli._app_common import CfgOpt, JsonOpt, SchedulerOpt, _runner, _scheduler
from torchx.cli._errors import CliError
from torchx.cli._handled import handled

# What ranks a sweep's trials, the same for every command that shows its table.
ObjectiveOpt = Annotated[
    str | None,
    typer.Option(
        "--objective",
        help="of a sweep: the recorded value that ranks the trials (default: objective)",
    ),
]
MaximizeOpt = Annotated[
    bool, typer.Option("--maximize", help="of a sweep: the highest objective is best")
]
ResultsOpt = Annotated[
    str | None,
    typer.Option(
        "--results",
        help="of a sweep: read each trial's objective from the result tracker at this URL,"
        " where it stored it under torchx.runtime.tracking.sweep_trial_key()",
    ),
]


def _refuse_results_of_an_app(results: str | None, handle: str) -> None:
    if results is not None:
        raise CliError(
            f"--results: got it with {handle!r}, an app's handle; it ranks a sweep's trials:"
            " give the sweep's handle"
        )


@handled
def status(
    handle: Annotated[str, typer.Argument(help="SCHEDULER://SESSION/APP_ID")],
    roles: Annotated[
        str, typer.Option("--roles", help="only these roles, comma separated (default: all)")
    ] = "",
    json_out: JsonOpt = False,
    watch: Annotated[
        bool,
        typer.Option(
            "-w",
            "--watch",
            help="redraw the status (of a sweep: its trials) in place until it ends (Ctrl-C stops)",
        ),
    ] = False,
    interval: Annotated[
        float, typer.Option("--interval", help="with --watch: seconds between redraws")
    ] = 2.0,
    objective: ObjectiveOpt = None,
    maximize: MaximizeOpt = False,
    results: ResultsOpt = None,
) -> None:
    """Show the state of an app and of each replica (of a sweep: every trial, best first
    when the trials record an objective; with --watch too)."""
    from torchx.cli._run import check_handle
    from torchx.cli._sweep_cli import resolve_trial, sweep_id, unknown_handle

    if watch:
        if json_out:
            raise CliError("--watch and --json: give one of them, not both")
        if interval <= 0:
            raise CliError(f"--interval: got {interval}; give a number of seconds above 0")
    if sweep_id(handle):
        if roles.strip():
            # a sweep's table has a line per trial, not per role: one trial has roles
            raise CliError(
                f"--roles: got it with {handle!r}, a sweep; a trial's status shows its roles:"
                f" torchx status --roles {roles.strip()} {handle}/INDEX"
            )
        if watch:
            from torchx.cli._sweep_cli import Ranking
            from torchx.cli._watch import watch_sweep

            watch_sweep(_runner(), handle, interval, Ranking(objective, maximize, results))
            return
        from torchx.cli._sweep_cli import Ranking, print_status

        print_status(_runner(), handle, json_out, Ranking(objective, maximize, results))
        return
    _refuse_results_of_an_app(results, handle)
    handle = resolve_trial(handle)
    check_handle(handle)
    if watch:
        from torchx.cli._watch import watch_status

        chosen = [r.strip() for r in roles.split(",") if r.strip()]
        watch_status(_runner(), handle, chosen or None, interval)
        return
    st = _runner().status(handle)
    if st is None:
        raise CliError(unknown_handle(handle))
    wanted = [r.strip() for r in roles.split(",") if r.strip()]
    known = [r.role for r in st.roles]
    # A status without replicas yet (queued) lists no roles to check against.
    unknown = [r for r in wanted if r not in known] if known else []
    if unknown:
        # A warning, not an error: 0.7 showed such a status with no replica and exit 0,
        # and scripts may rely on that.
        typer.echo(
            f"torchx: warning: --roles: got {', '.join(map(repr, unknown))}; the app's roles are "
            f"{', '.join(dict.fromkeys(known))}",
            err=True,
        )
    if json_out:
        from torchx.cli._output import print_json

        data = _status_dict(st)
        if wanted:
            data["roles"] = [r for r in data.get("roles", []) if r.get("role") in wanted]
        print_json({"handle": handle, **data})
        return
    typer.echo(st.format(wanted or None).rstrip())


def _status_dict(st: Any) -> dict[str, Any]:
    from torchx.cli._output import to_jsonable

    out: dict[str, Any] = to_jsonable(st)
    return out


@handled
def describe(
    handle: Annotated[str, typer.Argument(help="SCHEDULER://SESSION/APP_ID")],
    json_out: JsonOpt = False,
    objective: ObjectiveOpt = None,
    maximize: MaximizeOpt = False,
    results: ResultsOpt = None,
) -> None:
    """Show the AppDef a running or finished app was launched with (of a sweep: its trials,
    as status lists them)."""
    from torchx.cli._output import print_json
    from torchx.cli._run import check_handle
    from torchx.cli._sweep_cli import resolve_trial, sweep_id, unknown_handle

    if sweep_id(handle):
        from torchx.cli._sweep_cli import Ranking, print_status

        print_status(_runner(), handle, json_out, Ranking(objective, maximize, results))
        if not json_out:
            typer.echo(f"one trial's AppDef: torchx describe {handle}/INDEX")
        return
    _refuse_results_of_an_app(results, handle)
    handle = resolve_trial(handle)
    check_handle(handle)
    app_def = _runner().describe(handle)
    if app_def is None:
        raise CliError(unknown_handle(handle))
    if json_out:
        print_json(app_def)
        return
    from torchx.cli._output import to_jsonable

    typer.echo(f"AppDef {app_def.name}")
    for role in app_def.roles:
        data = to_jsonable(role)
        typer.echo(f"  role {data.pop('name')}:")
        for key, value in data.items():
            typer.echo(f"    {key}: {value}")


@handled
def log(
    target: Annotated[str, typer.Argument(help="SCHEDULER://SESSION/APP_ID[/ROLE[/REPLICA]]")],
    regex: Annotated[
        str | None, typer.Option("--regex", help="only lines matching this regex")
    ] = None,
    tail: Annotated[
        bool, typer.Option("-t", "--tail", "-f", "--follow", help="follow until the app ends")
    ] = False,
    streams: Annotated[
        str | None,
        typer.Option(
            "--streams",
            help="stdout, stderr or combined (default: combined, both streams; on Slurm, "
            "which keeps them in two files: stdout then stderr, interleaved as read while "
            "following)",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="only lines written since then: a duration back from now (10m, 2h) or a "
            "time (2024-05-01T12:00)",
            show_default=False,
        ),
    ] = None,
    timestamps: Annotated[
        bool,
        typer.Option(
            "--timestamps",
            help="show when each line was written (local, Docker, Kubernetes)",
        ),
    ] = False,
    exit_code: Annotated[
        bool,
        typer.Option(
            "--exit-code",
            help="once the logs are printed (with -t: once the app ended), exit 0 only if "
            "the app SUCCEEDED, else 1",
        ),
    ] = False,
    attempt: Annotated[
        int | None,
        typer.Option(
            "--attempt",
            help="only the lines of this attempt (1: the first run; status shows attempt=N "
            "once a replica was restarted or requeued)",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print the logs of an app, a role or one replica.

    Each line starts with its role/replica, and with #ATTEMPT once a replica was restarted.
    Without --exit-code the exit code is 0 whatever the app's state, as in torchx 0.7.
    """
    from torchx.cli._logs import (
        attempts_of,
        check_attempt,
        print_logs,
        replicas_of,
        split_log_target,
        wait_until_started,
    )
    from torchx.cli._sweep_cli import resolve_trial, sweep_id, unknown_handle
    from torchx.specs import is_started

    if sweep_id(target):
        raise CliError(f"log: {target!r} is a sweep; read one trial: {target}/INDEX")
    handle, role, replica = split_log_target(resolve_trial(target))
    if regex is not None:
        import re

        try:
            re.compile(regex)
        except re.error as e:
            raise CliError(f"--regex: got {regex!r}; not a valid regex: {e}") from None
    since_time = None
    if since is not None:
        from torchx.cli._durations import parse_since

        since_time = parse_since("--since", since)
    if attempt is not None and attempt < 1:
        raise CliError(f"--attempt: got {attempt}; attempts count from 1 (the first run)")
    runner = _runner()
    app_def = runner.describe(handle)
    if app_def is None:
        raise CliError(unknown_handle(handle))
    targets = replicas_of(app_def, role, replica)
    status = runner.status(handle)
    if replica is None and not tail:
        # An app's or a role's log waits for the app to start, as in 0.7: `torchx log H >
        # train.log` of a queued job writes its log, not an empty file.
        status = wait_until_started(runner, handle, status, target)
    elif not tail and status is not None and not is_started(status.state):
        # Said on stderr: the output is empty (or an earlier run's) for a reason.
        typer.echo(
            f"torchx: {handle} is {status.state.name}: it has not started, so its log may "
            f"be empty; `torchx log -f {target}` waits for its lines",
            err=True,
        )
    check_attempt(attempt, status, targets, handle, follow=tail)
    print_logs(
        runner,
        handle,
        targets,
        regex=regex,
        tail=tail,
        streams=streams,
        since=since_time,
        timestamps=timestamps,
        attempts=attempts_of(status),
        only_attempt=attempt,
    )
    if exit_code:
        from torchx.specs import AppState

        final = runner.status(handle)
        if final is None or final.state != AppState.SUCCEEDED:
            state = final.state.name if final is not None else "UNKNOWN"
            typer.echo(f"{handle} {state}", err=True)
            raise typer.Exit(1)


@handled
def wait(
    handles: Annotated[
        list[str] | None,
        typer.Argument(
            help="apps (or sweeps: all their trials) to wait on: SCHEDULER://SESSION/APP_ID ...",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout",
            help="stop waiting after this long (90, 30s, 10m, 2h); apps still running then "
            "make the exit code 124",
            show_default=False,
        ),
    ] = None,
    interval: Annotated[
        float,
        typer.Option("--interval", help="seconds between polls of schedulers that need it"),
    ] = 10.0,
    json_out: Annotated[
        bool, typer.Option("--json", help="one JSON object per app, one per line, as each ends")
    ] = False,
) -> None:
    """Wait until apps end (a sweep: every trial); exit 0 only if every one SUCCEEDED.

    Prints one line per app or sweep as it ends (HANDLE STATE[: why]). Exit codes: 0 all SUCCEEDED,
    1 one FAILED or was CANCELLED, 2 an unknown app, 124 --timeout ran out first.
    """
    from torchx.cli._wait import wait_command

    seconds = None
    if timeout is not None:
        from torchx.cli._durations import parse_duration

        seconds = parse_duration("--timeout", timeout)
    if interval <= 0:
        raise CliError(f"--interval: got {interval}; give a number of seconds above 0")
    code = wait_command(_runner(), list(handles or []), seconds, json_out, interval)
    if code:
        raise typer.Exit(code)


@handled
def list_apps(
    scheduler: SchedulerOpt = None,
    cfg: CfgOpt = None,
    state: Annotated[
        str | None,
        typer.Option(
            "--state", help="only apps in these states: RUNNING,FAILED...", show_default=False
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="only apps whose name contains this (or matches this glob)"),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="only apps submitted since then: 2h, 7d or a time"),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            help="show the N newest apps (default: [cli:list] limit, else 20)",
            show_default=False,
        ),
    ] = None,
    show_all: Annotated[bool, typer.Option("--all", help="show every app")] = False,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune",
            help="remove the records and logs of local apps that ended longer ago than "
            "[cli:list] retention (default 14d); running apps are kept",
        ),
    ] = False,
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", help="with --prune: instead of the retention (7d, 12h)"),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """List a scheduler's apps, newest last, with when they started and ended."""
    from torchx.cli._list import list_command, prune_command
    from torchx.cli._run import parse_cfg

    if limit is not None and limit < 1:
        raise CliError(f"--limit: got {limit}; give a number of apps above 0, or --all")
    runner = _runner()
    sched = _scheduler(runner, scheduler)
    if prune:
        prune_command(runner, sched, older_than, json_out)
        return
    if older_than is not None:
        raise CliError("--older-than: only with --prune; to see older apps use --all")
    list_command(
        runner,
        sched,
        parse_cfg(runner, sched, cfg),
        states=state,
        name=name,
        since=since,
        limit=limit,
        show_all=show_all,
        json_out=json_out,
    )
