"""The ``torchx`` command: a thin typer layer over ``torchx.runner``.

Nothing heavy is imported at module level: each command imports the runner, the
components or the schedulers only when it runs, so ``torchx --help`` stays fast.
"""

# No ``from __future__ import annotations`` here: typer reads each command's signature on
# every start (twice), and string annotations would be evaluated, typer.Option calls and
# all, each time; evaluated once at import they cost nothing more.

from typing import TYPE_CHECKING, Annotated, Any

import click.exceptions
import typer
import typer.core

from torchx.cli._errors import CliError
from torchx.cli._handled import debug_state, handled

if TYPE_CHECKING:
    from collections.abc import Mapping

    from torchx.runner import Runner, TorchxConfig

app = typer.Typer(
    name="torchx",
    help="Launch PyTorch apps on local processes or any scheduler.",
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    # click 8.4 and later suggest a close command name themselves; typer adding its own
    # suggestion too printed "Did you mean 'run'?" twice.
    suggest_commands=not hasattr(click.exceptions, "NoSuchCommand"),
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Installed packages may add commands (entry-point group torchx.cli.cmds); "
    "run them as 'torchx NAME'.",
)


def _complete_scheduler(incomplete: str) -> list[str]:
    from torchx.schedulers import get_scheduler_factories

    return sorted(n for n in get_scheduler_factories() if n.startswith(incomplete))


SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "-s",
        "--scheduler",
        help="scheduler backend (default: local_cwd)",
        autocompletion=_complete_scheduler,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        # the form pytorch/torchx 0.7 prints (argparse's ``prog-VERSION``)
        typer.echo(f"torchx-{version('torchx')}")
        raise typer.Exit()


@app.callback()
def root(
    debug: Annotated[
        bool, typer.Option("--debug", help="show tracebacks of errors instead of one line")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="print the version"),
    ] = False,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log_level",
            "--log-level",
            help="python logging level of torchx and the libraries it uses: DEBUG, INFO, "
            "WARNING, ERROR (default: $LOGLEVEL, else WARNING)",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Launch PyTorch apps on local processes or any scheduler."""
    debug_state["debug"] = debug
    import os

    level = log_level or os.environ.get("LOGLEVEL")
    if level:
        _set_log_level(level)


def _set_log_level(level: str) -> None:
    import logging

    value = logging.getLevelName(level.upper())
    if not isinstance(value, int):
        typer.echo(
            f"torchx: error: --log_level: got {level!r}; expected DEBUG, INFO, WARNING, ERROR "
            "or CRITICAL",
            err=True,
        )
        raise typer.Exit(2)
    logging.basicConfig(level=value, format="%(levelname)s %(name)s: %(message)s")


def _runner() -> "Runner":
    from torchx.runner import get_runner

    return get_runner()


def _runner_of(config: "TorchxConfig") -> "Runner":
    """The runner ``get_runner()`` makes, over ``config`` already read."""
    from torchx.cli._run import scheduler_factories
    from torchx.runner import DEFAULT_SESSION, Runner

    return Runner(DEFAULT_SESSION, scheduler_factories(), config=config)


def _scheduler(
    runner: "Runner", name: str | None, run_defaults: "Mapping[str, str] | None" = None
) -> str:
    """``name``, else ``[cli:run] scheduler`` of the config files (``run_defaults`` where
    the caller read them already), else local_cwd."""
    from torchx.schedulers import DEFAULT_SCHEDULER

    if not name and run_defaults is None:
        run_defaults = runner.config.cli_defaults("run")
    scheduler = name or (run_defaults or {}).get("scheduler") or DEFAULT_SCHEDULER
    if not runner.has_scheduler(scheduler):
        from torchx.specs import closest

        known = runner.scheduler_backends()
        raise CliError(f"scheduler: got {scheduler!r}; {closest(scheduler, known)}")
    return scheduler


def _complete_component(incomplete: str) -> list[str]:
    from torchx.components import list_components

    return [name for name in list_components() if name.startswith(incomplete)]


def _complete_component_args(ctx: typer.Context, incomplete: str) -> list[str]:
    """The component's own flags (``--msg``, ``--image``...) after ``run COMPONENT``."""
    component = ctx.params.get("component")
    if not component:
        return []
    try:
        from torchx.components import get_component

        schema = get_component(component)
    except Exception:  # an unknown or broken component has nothing to complete
        return []
    flags = [a.flag for a in schema.options.values()]
    return [f for f in [*flags, "--help"] if f.startswith(incomplete)]


class _RunCommand(typer.core.TyperCommand):
    """``run``, whose completion after the component offers the component's own flags."""

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        if ctx.params.get("component"):
            from click.shell_completion import CompletionItem

            return [CompletionItem(f) for f in _complete_component_args(ctx, incomplete)]
        return list(super().shell_complete(ctx, incomplete))


@app.command(
    cls=_RunCommand,
    context_settings={
        "allow_interspersed_args": False,
        "ignore_unknown_options": True,
        "help_option_names": [],
    },
)
@handled
def run(
    ctx: typer.Context,
    component: Annotated[
        str | None,
        typer.Argument(
            help="builtin (utils.echo), path/to/file.py:fn or path/to/file.py",
            show_default=False,
            autocompletion=_complete_component,
        ),
    ] = None,
    component_args: Annotated[
        list[str] | None,
        typer.Argument(
            help="the component's arguments (COMPONENT --help lists them)",
            autocompletion=_complete_component_args,
        ),
    ] = None,
    scheduler: SchedulerOpt = None,
    cfg: Annotated[
        str | None,
        typer.Option("-cfg", "--cfg", "--scheduler_args", help="run options: k1=v1,k2=v2"),
    ] = None,
    dryrun: Annotated[
        bool, typer.Option("--dryrun", help="print the request instead of submitting it")
    ] = False,
    wait: Annotated[
        bool | None,
        typer.Option(
            "--wait/--no-wait",
            help="wait for the app (default: on local schedulers); Ctrl-C while waiting "
            "cancels the app, --no-wait leaves it running and prints its handle",
        ),
    ] = None,
    log: Annotated[
        bool | None,
        typer.Option("--log/--no-log", help="stream its logs while waiting (default: with --wait)"),
    ] = None,
    workspace: Annotated[
        str | None,
        typer.Option(
            "--workspace",
            "--buck-target",
            help="directory built into the app: an image on local_docker and kubernetes, "
            "Ray's working_dir, a new Slurm job_dir (default: the current directory, less "
            'what .torchxignore lists; "" for none)',
        ),
    ] = None,
    json_out: JsonOpt = False,
    parent_run_id: Annotated[
        str | None,
        typer.Option(
            "--parent_run_id",
            "--parent-run-id",
            help="the run this one derives from, recorded by the configured trackers",
        ),
    ] = None,
    sweep: Annotated[
        list[str] | None,
        typer.Option(
            "--sweep",
            help="NAME=V1,V2: run one trial per value (repeat for a grid over several "
            "arguments); prints the sweep's handle",
        ),
    ] = None,
    parallel: Annotated[
        int,
        typer.Option(
            "--parallel", help="with --sweep: at most this many trials at once (0: all at once)"
        ),
    ] = 0,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", help="SWEEP handle: run again only its trials that did not succeed"
        ),
    ] = None,
) -> None:
    """Run a component on a scheduler.

    COMPONENT is a builtin (utils.echo; see 'torchx builtins'), path/to/file.py:fn or
    path/to/file.py. Everything after it goes to the component: 'torchx run COMPONENT
    --help' lists its arguments. On local schedulers the command waits for the app and
    streams its logs; its exit code is 1 when the app fails. Ctrl-C while waiting cancels
    the app and exits 130; use --no-wait to start an app and leave it running.
    """
    from torchx.cli._run import RunArgs, RunSetup, run_component

    setup = RunSetup(_runner_of)
    # ``torchx run`` alone runs ``[cli:run] component`` if the config files name one
    if resume is None and (
        component in ("-h", "--help") or (component is None and not setup.defaults.get("component"))
    ):
        typer.echo(ctx.get_help())
        raise typer.Exit()

    args = RunArgs(
        component=component,
        component_args=list(component_args or []),
        scheduler=scheduler,
        cfg=cfg,
        dryrun=dryrun,
        wait=wait,
        workspace=workspace,
        json_out=json_out,
        parent_run_id=parent_run_id,
    )
    if sweep or resume is not None or parallel:
        from torchx.cli._sweep_cli import run_sweep

        if not sweep and resume is None:
            raise CliError("--parallel: only with --sweep NAME=V1,V2 (or --resume SWEEP)")
        code = run_sweep(
            setup, _scheduler, sweeps=list(sweep or []), parallel=parallel, resume=resume, **args
        )
    else:
        code = run_component(setup, _scheduler, log=log, **args)
    if code:
        raise typer.Exit(code)


@app.command()
@handled
def builtins(
    print_name: Annotated[
        str | None,
        typer.Option("--print", help="print the source of this component", show_default=False),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="a table with each component's summary")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """List the builtin components, one line each."""
    from torchx.components import get_component, list_components

    if print_name:
        import inspect

        schema = get_component(print_name)
        typer.echo(inspect.getsource(schema.fn))
        return
    found = list_components()
    if json_out:
        from torchx.cli._output import print_json

        print_json([{"name": n, "summary": s.summary} for n, s in found.items()])
        return
    typer.echo(f"Found {len(found)} builtin components:")
    if not verbose:  # as pytorch/torchx 0.7 lists them
        typer.echo("\n".join(f" {i:2d}. {name}" for i, name in enumerate(found, 1)))
        return
    from torchx.cli._output import print_table

    print_table(["NAME", "DESCRIPTION"], [[n, s.summary] for n, s in found.items()])


@app.command()
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
    objective: Annotated[
        str,
        typer.Option("--objective", help="of a sweep: the recorded value that ranks the trials"),
    ] = "objective",
    maximize: Annotated[
        bool, typer.Option("--maximize", help="of a sweep: the highest objective is best")
    ] = False,
) -> None:
    """Show the state of an app and of each replica (of a sweep: every trial, best first
    when the trials record an objective)."""
    from torchx.cli._run import check_handle
    from torchx.cli._sweep_cli import no_such, resolve_trial, sweep_id

    if watch:
        if json_out:
            raise CliError("--watch and --json: give one of them, not both")
        if interval <= 0:
            raise CliError(f"--interval: got {interval}; give a number of seconds above 0")
    if sweep_id(handle):
        if watch:
            from torchx.cli._watch import watch_sweep

            watch_sweep(_runner(), handle, interval)
            return
        from torchx.cli._sweep_cli import print_status

        print_status(_runner(), handle, json_out, objective, maximize)
        return
    handle = resolve_trial(handle)
    check_handle(handle)
    if watch:
        from torchx.cli._watch import watch_status

        chosen = [r.strip() for r in roles.split(",") if r.strip()]
        watch_status(_runner(), handle, chosen or None, interval)
        return
    st = _runner().status(handle)
    if st is None:
        raise CliError(f"app handle: got {handle!r}; {no_such(handle)}")
    wanted = [r.strip() for r in roles.split(",") if r.strip()]
    known = [r.role for r in st.roles]
    # A status without replicas yet (queued) lists no roles to check against.
    unknown = [r for r in wanted if r not in known] if known else []
    if unknown:
        # A warning, not an error: 0.7 showed such a status with no replica and exit 0,
        # and scripts may rely on that.
        typer.echo(
            f"torchx: warning: --roles: got {unknown[0]!r}; the app's roles are "
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


@app.command()
@handled
def describe(
    handle: Annotated[str, typer.Argument(help="SCHEDULER://SESSION/APP_ID")],
    json_out: JsonOpt = False,
) -> None:
    """Show the AppDef a running or finished app was launched with (of a sweep: its trials,
    as status lists them)."""
    from torchx.cli._output import print_json
    from torchx.cli._run import check_handle
    from torchx.cli._sweep_cli import no_such, resolve_trial, sweep_id

    if sweep_id(handle):
        from torchx.cli._sweep_cli import print_status

        print_status(_runner(), handle, json_out)
        if not json_out:
            typer.echo(f"one trial's AppDef: torchx describe {handle}/INDEX")
        return
    handle = resolve_trial(handle)
    check_handle(handle)
    app_def = _runner().describe(handle)
    if app_def is None:
        raise CliError(f"app handle: got {handle!r}; {no_such(handle)}")
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


@app.command()
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
        str | None, typer.Option("--streams", help="stdout, stderr or combined")
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
        print_logs,
        replicas_of,
        split_log_target,
        wait_until_started,
    )
    from torchx.cli._sweep_cli import no_such, resolve_trial, sweep_id
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
        raise CliError(f"app handle: got {handle!r}; {no_such(handle)}")
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


@app.command()
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


@app.command()
@handled
def cancel(handle: Annotated[str, typer.Argument(help="SCHEDULER://SESSION/APP_ID")]) -> None:
    """Stop an app (a sweep: every trial)."""
    from torchx.cli._run import check_handle
    from torchx.cli._sweep_cli import no_such, resolve_trial, sweep_id

    if sweep_id(handle):
        from torchx.cli._sweep_cli import cancel as cancel_sweep

        cancel_sweep(_runner(), handle)
        return
    handle = resolve_trial(handle)
    check_handle(handle)
    from torchx.specs import is_terminal

    runner = _runner()
    before = runner.status(handle)
    if before is None:
        # Runner.cancel ignores an unknown app, as pytorch/torchx's does; at the command
        # line a mistyped handle deserves to be told.
        raise CliError(f"app handle: got {handle!r}; {no_such(handle)}")
    # Say what happened, not what was asked: an app that had already ended stays as it was.
    if is_terminal(before.state):
        typer.echo(f"{handle} was not running: it had already ended as {before.state.name}")
        return
    runner.cancel(handle)
    typer.echo(f"cancelled {handle}")


@app.command()
@handled
def requeue(handle: Annotated[str, typer.Argument(help="SCHEDULER://SESSION/APP_ID")]) -> None:
    """Requeue an app as a preemption would: it is warned (SIGTERM), may checkpoint, stops,
    and starts again under the same handle."""
    from torchx.cli._run import check_handle

    check_handle(handle)
    status = _runner().requeue(handle)
    preemptions = status.num_preemptions if status is not None else 0
    state = status.state.name if status is not None else "UNKNOWN"
    typer.echo(f"requeued {handle} (preemption {preemptions}); now {state}")
    if status is not None:
        from torchx.cli._attempt_record import record_requeue

        for problem in record_requeue(handle, status):
            typer.echo(f"warning: {problem}", err=True)


@app.command(name="list")
@handled
def list_apps(
    scheduler: SchedulerOpt = None,
    cfg: Annotated[
        str | None,
        typer.Option("-cfg", "--cfg", "--scheduler_args", help="run options: k1=v1,k2=v2"),
    ] = None,
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


def _all_run_opts(runner: "Runner") -> dict[str, Any]:
    """Every scheduler's run options. A scheduler plug-in that cannot be loaded is left
    out with a warning naming it, so one broken package does not hide the others."""
    from torchx.cli._errors import one_line

    out: dict[str, Any] = {}
    for name in runner.scheduler_backends():
        try:
            out[name] = runner.scheduler_run_opts(name)
        except Exception as e:
            typer.echo(f"torchx: warning: scheduler {name!r} is left out: {one_line(e)}", err=True)
    return out


@app.command()
@handled
def runopts(
    scheduler: Annotated[
        str | None, typer.Argument(help="one scheduler (default: all)", show_default=False)
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Show the run options (-cfg) each scheduler accepts."""
    runner = _runner()
    if scheduler:
        name = _scheduler(runner, scheduler)
        opts = {name: runner.scheduler_run_opts(name)}
    else:
        opts = _all_run_opts(runner)
    if json_out:
        from torchx.cli._output import print_json

        print_json(
            {
                name: {
                    k: {
                        "type": o.opt_type.__name__,
                        "default": o.default,
                        "required": o.is_required,
                        "help": o.help,
                    }
                    for k, o in ro
                }
                for name, ro in opts.items()
            }
        )
        return
    for name, ro in opts.items():
        typer.echo(f"{name}:")
        text = str(ro).rstrip()
        typer.echo("\n".join("  " + ln for ln in text.splitlines()) if text else "  (none)")


@app.command()
@handled
def configure(
    schedulers: Annotated[
        str | None,
        typer.Option(
            "-s",
            "--schedulers",
            "--scheduler",
            help="the schedulers to write, comma separated (default: all)",
            autocompletion=_complete_scheduler,
        ),
    ] = None,
    print_only: Annotated[
        bool, typer.Option("--print", help="print the file instead of writing it")
    ] = False,
    all_opts: Annotated[
        bool,
        typer.Option("-a", "--all", help="write every option, not only the required ones"),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="overwrite an existing file")] = False,
) -> None:
    """Write a .torchxconfig in the current directory with the schedulers' options."""
    from torchx.cli._config import config_path, render

    runner = _runner()
    wanted = [n.strip() for n in (schedulers or "").split(",") if n.strip()]
    # Without a list: every scheduler whose options can be read (a broken plug-in is named
    # in a warning and left out).
    names = [_scheduler(runner, n) for n in wanted] if wanted else list(_all_run_opts(runner))
    text = render(names, all_opts)
    if print_only:
        typer.echo(text, nl=False)
        return
    path = config_path()
    if path.exists() and not force:
        raise CliError(f"configure: {path} already exists; pass --force to overwrite it")
    path.write_text(text)
    typer.echo(f"wrote {path}")


def _register_tracker_commands() -> None:
    from torchx.cli._tracker import tracker_app

    app.add_typer(tracker_app, name="tracker")


_register_tracker_commands()
