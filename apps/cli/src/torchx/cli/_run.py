"""``torchx run``: component -> AppDef -> dryrun or submit -> wait, streaming logs."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

import typer

from torchx.cli._errors import msg_line, stop_signal

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11+; annotations only, so 3.10 runs this

    from torchx.cli._run_setup import RunSetup
    from torchx.runner import Runner
    from torchx.specs import AppDef, AppStatus

# Schedulers whose apps run on this machine: waiting and streaming logs is the default,
# as `docker run` does for a container.
LOCAL_SCHEDULERS = ("local_cwd", "local_dir", "local_docker")


# How ``torchx run`` picks the scheduler: ``(runner, --scheduler, [cli:run] defaults)``.
_Fallback = TypeVar("_Fallback", bool, None)
PickScheduler = Callable[["Runner", str | None, Mapping[str, str]], str]


class RunArgs(TypedDict):
    """What ``torchx run`` passes on alike to one app's run and to a sweep's."""

    component: str | None
    component_args: list[str]
    scheduler: str | None
    cfg: str | None
    dryrun: bool
    wait: bool | None
    workspace: str | None
    json_out: bool
    parent_run_id: str | None


def check_handle(handle: str) -> None:
    """Refuse, in one line, a handle that is not ``SCHEDULER://SESSION/APP_ID``: a
    malformed one, or ``torchx log``'s ``HANDLE/ROLE[/REPLICA]`` given to a command that
    takes the app (nothing is done to the app)."""
    from torchx.specs import SpecsError, parse_app_handle

    try:
        parsed = parse_app_handle(handle)
    except SpecsError as e:
        from torchx.cli._handle_hint import bad_handle  # only for a malformed handle

        raise bad_handle(handle, e) from None
    if "/" in parsed.app_id:
        from torchx.cli._handle_hint import log_target_error

        raise log_target_error(handle, parsed)


def parse_cfg(runner: Runner, scheduler: str, text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    from torchx.specs import InvalidRunConfigException, closest, split_cfg

    opts = runner.scheduler_run_opts(scheduler)
    known = [name for name, _ in opts]
    for key, value in split_cfg(text).items():
        if key not in opts:
            # cfg_from_str leaves unknown keys out, as 0.7 did; a typo must not pass silently
            hint = closest(key, known) if known else f"{scheduler} takes no run options"
            raise InvalidRunConfigException(hint, key, value=value)
    parsed: dict[str, Any] = opts.cfg_from_str(text)
    return parsed


def run_component(
    setup: RunSetup,
    pick_scheduler: PickScheduler,
    *,
    log: bool | None,
    **args: Unpack[RunArgs],
) -> int:
    """Run (or dry-run) one component; returns the exit code."""
    from torchx.cli._component_args import component_of_command_line

    json_out, wait = args["json_out"], args["wait"]

    _, argv, schema, parsed = component_of_command_line(
        args["component"], args["component_args"], setup
    )
    if parsed.help:
        typer.echo(schema.help())
        return 0
    runner, defaults = setup.runner, setup.defaults
    # the schema found above goes to the runner: nothing is looked up twice
    app = runner.component_app(schema, argv)
    sched = pick_scheduler(runner, args["scheduler"], defaults)
    dryrun = args["dryrun"] or flag(setup, "dryrun", False)
    run_cfg = parse_cfg(runner, sched, args["cfg"])
    workspace = resolve_workspace(runner, sched, run_cfg, lambda: app, args["workspace"], defaults)
    info = runner.dryrun(
        app, sched, cfg=run_cfg, workspace=workspace, parent_run_id=args["parent_run_id"]
    )
    warn_unrecorded_parent(runner, args["parent_run_id"], sweep=False)
    if dryrun:
        from torchx.cli._dryrun_text import describe_app, image_origin, resource_origin

        origin = image_origin(runner, schema, parsed)
        if json_out:
            from torchx.cli._output import print_json

            out = {"scheduler": sched, "app": app, "request": str(info)}
            print_json({**out, "image_origin": origin} if origin else out)
        else:
            named = resource_origin(runner, schema, parsed)
            described = describe_app(app, origin, info.app, named)
            typer.echo(f"=== APPLICATION ===\n{described}\n=== SCHEDULER REQUEST ===")
            typer.echo(str(info))
        return 0

    if sched in LOCAL_SCHEDULERS:
        from torchx.cli._surprises import refuse_missing_script, warn_missing_gpus

        refuse_missing_script(schema.name, parsed.values.get("script"), info.request, sched)
        warn_missing_gpus(app, sched)
    wait, stream_logs = wait_and_stream(wait, log, json_out, sched in LOCAL_SCHEDULERS, setup)
    handle = runner.schedule(info)
    # From here on a waiting run owns the app: a Ctrl-C even before the handle is printed
    # must cancel it, not leave it running unseen.
    try:
        if not json_out:
            # The handle alone on stdout, at once, waiting or not, so that
            # ``H=$(torchx run ...)`` captures it; what follows a waiting run (its logs, its
            # final state) goes to stderr, as with pytorch/torchx.
            print(handle, flush=True)
        if not wait:
            if json_out:
                _report(handle, None, json_out)
            return 0
        status = _wait(runner, handle, app, stream_logs)
    except (KeyboardInterrupt, Exception) as e:
        signum = stop_signal(e)
        if not wait or signum is None:
            raise
        return cancel_on_stop(runner.cancel, handle, signum)
    _report(handle, status, json_out, logs_shown=stream_logs)
    from torchx.specs import AppState

    if status is None or status.state != AppState.SUCCEEDED:
        if status is not None and not json_out and sched in LOCAL_SCHEDULERS:
            from torchx.cli._surprises import note_other_python

            note_other_python(info.request, status)
        return 1
    return 0


def warn_unrecorded_parent(runner: Runner, parent_run_id: str | None, *, sweep: bool) -> None:
    """One warning line when nothing will record ``--parent_run_id``: a sweep's trials
    get the sweep's handle as their parent run instead, and an app gets no tracker when
    neither the config files nor ``TORCHX_TRACKERS`` name one (the runner's rule)."""
    if not parent_run_id:
        return
    from torchx.cli._record_skips import warn_line
    from torchx.runner import trackers_env

    if sweep:
        warn_line(
            f"--parent_run_id: got {parent_run_id!r}; a sweep's trials record the sweep's"
            " handle as their parent run (TORCHX_PARENT_RUN_ID), so nothing records it; to"
            " keep the lineage, record it as the source of the sweep's handle with"
            " torchx.tracker's add_source"
        )
    elif not trackers_env(runner.config.trackers()):
        warn_line(
            f"--parent_run_id: got {parent_run_id!r}; no tracker is configured, so nothing"
            " records it (the app still sees TORCHX_PARENT_RUN_ID); add a [torchx:tracker]"
            " section to .torchxconfig (or set TORCHX_TRACKERS) to record lineage"
        )


def resolve_workspace(
    runner: Runner,
    sched: str,
    run_cfg: dict[str, Any],
    app: Callable[[], AppDef],
    given: str | None,
    defaults: Mapping[str, str],
) -> str | None:
    """The workspace of a run or a sweep: ``--workspace``, else ``[cli:run] workspace``,
    else the scheduler's default (the current directory, as with pytorch/torchx 0.7), which
    is announced once on stderr. An empty value, on the command line or in the config, turns
    the workspace off. ``app`` (called only to name its roles in the notice) is the app, or
    a sweep's first trial. A local workspace shipping more than LARGE_WORKSPACE_BYTES gets
    one warning on stderr, before anything is built."""
    if given is None:
        given = defaults.get("workspace")
    if given is not None:
        workspace = given.strip() or None
    else:
        workspace = runner.default_workspace(sched, run_cfg) or None
        if workspace:
            print(
                f'torchx: {_what_is_done(runner, sched, app(), workspace)}; --workspace "" to skip',
                file=sys.stderr,
            )
    if workspace:
        # an image workspace (DockerWorkspaceMixin) also leaves out what .dockerignore lists
        _warn_if_large(workspace, image="image_repo" in runner.scheduler_run_opts(sched))
    return workspace


def _warn_if_large(workspace: str, image: bool) -> None:
    import os

    from torchx.specs import SpecsError
    from torchx.workspace.api import IMAGE_IGNORE_FILES, TORCHX_IGNORE, workspace_dir
    from torchx.workspace.size import LARGE_WORKSPACE_BYTES, large_workspace_warning

    try:
        local = os.path.isdir(workspace_dir(workspace))
    except SpecsError:  # a URL a custom workspace reads itself: nothing to measure here
        return
    if local:
        ignore_files = IMAGE_IGNORE_FILES if image else (TORCHX_IGNORE,)
        warning = large_workspace_warning(workspace, LARGE_WORKSPACE_BYTES, ignore_files)
        if warning:
            print(warning, file=sys.stderr)


def _what_is_done(runner: Runner, sched: str, app: AppDef, workspace: str) -> str:
    """What the scheduler does with a default ``workspace``, in a few words."""
    import os

    where = f"the current directory ({workspace})" if workspace == os.getcwd() else workspace
    opts = runner.scheduler_run_opts(sched)
    roles = ", ".join(r.name for r in app.roles)
    noun = "role" if len(app.roles) == 1 else "roles"
    if "image_repo" in opts:  # an image workspace (DockerWorkspaceMixin)
        return f"building {where} into the image of {noun} {roles}"
    if "working_dir" in opts:  # Ray ships it to the cluster
        return f"shipping {where} to the cluster as the job's working_dir"
    if "job_dir" in opts:  # a directory workspace (Slurm)
        return f"copying {where} into the new job_dir"
    return f"using {where} as the workspace of {noun} {roles}"


def wait_and_stream(
    wait: bool | None, log: bool | None, json_out: bool, local: bool, setup: RunSetup
) -> tuple[bool, bool]:
    """Whether ``torchx run`` waits for the app, and whether it streams the app's log while
    it waits, from ``--wait/--no-wait``, ``--log/--no-log`` (None: not given), ``--json``,
    whether the scheduler runs apps on this machine and ``[cli:run]``'s ``wait``/``log``."""
    if wait is None:
        # Asking for the logs asks to wait for them, as in pytorch/torchx 0.7, where
        # `--log` alone made a run on a remote scheduler wait and stream.
        wait = bool(log) or flag(setup, "wait", local or flag(setup, "log", False))
    log = flag(setup, "log", wait) if log is None else log
    return wait, wait and bool(log) and not json_out


def flag(setup: RunSetup, key: str, fallback: _Fallback) -> bool | _Fallback:
    """``[cli:run] KEY`` of the config files as a boolean, ``fallback`` when they do not
    set it; any other value is an error naming the file that holds it."""
    defaults = setup.defaults
    if key not in defaults:
        return fallback
    value = defaults[key].strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    raise setup.config.cli_default_error("run", key, "expected true or false")


def cancel_on_stop(cancel: Callable[[str], object], handle: str, signum: int) -> int:
    """A stop while waiting (:func:`stop_signal`: Ctrl-C, or SIGTERM, which a local
    scheduler turns into SignalException as 0.7's did): the app (or sweep) ``handle`` was
    started by this command, so ``cancel`` stops it too, as an attached ``docker run``
    does; ``--no-wait`` leaves it running. The exit code is the shell's for a process
    killed by ``signum`` (130, 143)."""
    import signal

    # A second Ctrl-C or SIGTERM must not leave the cancel half done.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        cancel(handle)
    except Exception as e:
        print(f"torchx: interrupted; cancelling {handle} failed: {e}", file=sys.stderr)
        return 128 + signum
    print(f"torchx: interrupted; cancelled {handle} (use --no-wait to detach)", file=sys.stderr)
    return 128 + signum


def _wait(runner: Runner, handle: str, app: AppDef, stream_logs: bool) -> AppStatus | None:
    if not stream_logs:
        return runner.wait(handle)
    import threading

    from torchx.cli._logs import print_logs, replicas_of

    # Logs stream in the foreground so every line is out before the status is printed;
    # tailing ends by itself when the app does. The waiter is a daemon: a Ctrl-C in the
    # foreground must not then wait for it.
    done: dict[str, AppStatus | None] = {}
    waiter = threading.Thread(target=lambda: done.setdefault("s", runner.wait(handle)), daemon=True)
    waiter.start()
    try:
        print_logs(runner, handle, replicas_of(app), tail=True, out=sys.stderr, fold_launcher=True)
    except Exception as e:
        if stop_signal(e) is not None:
            raise
        # Logs are a courtesy while waiting: a scheduler that keeps none (or fails to read
        # them) still gets its app waited for and its final status printed.
        from torchx.cli._errors import one_line

        print(f"torchx: not showing the logs of {handle}: {one_line(e)}", file=sys.stderr)
    waiter.join()
    return done.get("s")


def _report(
    handle: str, status: AppStatus | None, json_out: bool, logs_shown: bool = False
) -> None:
    if json_out:
        from torchx.cli._output import print_json, to_jsonable

        out: dict[str, Any] = {"handle": handle}
        if status is not None:
            out.update(to_jsonable(status))
        print_json(out)
        return
    if status is None:
        print(f"{handle}: the scheduler no longer knows the app", file=sys.stderr)
        return
    if status.state.name == "SUCCEEDED":
        print(f"{handle} {status.state.name}", file=sys.stderr)
    elif logs_shown:
        # The error is in the log just streamed: say which replica ended it, in one line.
        why = msg_line(status.msg)
        print(f"{handle} {status.state.name}" + (f": {why}" if why else ""), file=sys.stderr)
    else:
        print(status.format(), file=sys.stderr)
        print(f"{handle} {status.state.name}", file=sys.stderr)
