"""The ``torchx`` command: a thin typer layer over ``torchx.runner``.

Nothing heavy is imported at module level: each command imports the runner, the
components or the schedulers only when it runs, so ``torchx --help`` stays fast.

This module makes the app, its root options and ``run`` and ``builtins``; the other
commands are written in ``_app_inspect`` (status, describe, log, wait, list),
``_app_control`` (cancel, requeue) and ``_app_runopts`` (runopts, configure), and
registered here in the order ``torchx --help`` lists them.
"""

# No ``from __future__ import annotations`` here: typer reads each command's signature on
# every start (twice), and string annotations would be evaluated, typer.Option calls and
# all, each time; evaluated once at import they cost nothing more.

from typing import Annotated, Any

import click.exceptions
import typer

from torchx.cli._app_common import (
    CfgOpt,
    JsonOpt,
    OnceOptionsCommand,
    SchedulerOpt,
    _runner_of,
    _scheduler,
)
from torchx.cli._app_control import cancel, requeue
from torchx.cli._app_inspect import describe, list_apps, log, status, wait
from torchx.cli._app_runopts import configure, runopts
from torchx.cli._errors import CliError
from torchx.cli._handled import debug_state, handled

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


class _RunCommand(OnceOptionsCommand):
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
    cfg: CfgOpt = None,
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
        typer.Option(
            "--log/--no-log",
            help="stream its logs while waiting (default: with --wait; not with --sweep)",
        ),
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
    from torchx.cli._run import RunArgs, run_component
    from torchx.cli._run_setup import RunSetup

    setup = RunSetup(_runner_of)
    # ``torchx run`` alone runs ``[cli:run] component`` if the config files name one
    if resume is None and component in ("-h", "--help"):
        typer.echo(ctx.get_help())
        raise typer.Exit()
    if resume is None and component is None and not setup.defaults.get("component"):
        # the help, and then an error (exit 2, as 0.7): a script whose component variable
        # came out empty must not read as a successful launch. Both go to stderr (0.7 printed
        # its usage there), so ``H=$(torchx run $COMPONENT)`` captures no help as a handle.
        from torchx.cli._component_args import MISSING_COMPONENT

        typer.echo(ctx.get_help(), err=True)
        raise CliError(MISSING_COMPONENT)

    if wait is False and log:
        raise CliError(
            "--log: given with --no-wait, but logs stream only while torchx run waits; drop "
            "one of them (torchx log -f HANDLE follows an app left running)"
        )
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
        if log:
            # many trials' logs interleaved would be unreadable; each trial has its own
            raise CliError(
                "--log: a sweep's trials are not streamed together; leave out --log and "
                "follow one trial with torchx log -f SWEEP/INDEX (SWEEP: the handle it prints)"
            )
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
    from torchx.components import list_components

    if print_name:
        from torchx.specs.finder import get_builtin_source

        # a file that runs as it is: the imports and private helpers come with it
        typer.echo(get_builtin_source(print_name), nl=False)
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
    import re

    from torchx.cli._output import print_table

    # a docstring's ``literal`` reads as `literal` on a terminal, as in `run NAME --help`
    rows = [[n, re.sub(r"``([^`]+)``", r"`\1`", s.summary)] for n, s in found.items()]
    print_table(["NAME", "DESCRIPTION"], rows)


# The commands of the other modules, in the order ``torchx --help`` lists them.
for _command in (status, describe, log, wait, cancel, requeue):
    app.command()(_command)
app.command(name="list", cls=OnceOptionsCommand)(list_apps)
app.command()(runopts)
app.command()(configure)


def _register_tracker_commands() -> None:
    from torchx.cli._tracker import tracker_app

    app.add_typer(tracker_app, name="tracker")


_register_tracker_commands()
