"""The commands that act on a running app: ``cancel`` stops it (a sweep: every trial)
and ``requeue`` makes it start again as a preemption would.
"""

# No ``from __future__ import annotations``, as in ``_app``: typer reads each command's
# signature on every start, and string annotations would be evaluated each time.

from typing import Annotated

import typer

from torchx.cli._app_common import _runner
from torchx.cli._errors import CliError
from torchx.cli._handled import handled


@handled
def cancel(handle: Annotated[str, typer.Argument(help="SCHEDULER://SESSION/APP_ID")]) -> None:
    """Stop an app (a sweep: every trial)."""
    from torchx.cli._run import check_handle
    from torchx.cli._sweep_cli import resolve_trial, sweep_id, unknown_handle

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
        raise CliError(unknown_handle(handle))
    # Say what happened, not what was asked: an app that had already ended stays as it was,
    # but where its scheduler keeps its objects (Kubernetes), cancel still deletes them.
    if is_terminal(before.state):
        ended = f"it had already ended as {before.state.name}"
        if not runner.ended_app_holds_objects(handle):
            typer.echo(f"{handle} was not running: {ended}")
            return
        runner.cancel(handle)
        typer.echo(f"deleted what {handle} left on its scheduler ({ended})")
        return
    runner.cancel(handle)
    typer.echo(f"cancelled {handle}")


@handled
def requeue(handle: Annotated[str, typer.Argument(help="SCHEDULER://SESSION/APP_ID")]) -> None:
    """Requeue an app as a preemption would: it is warned (SIGTERM), may checkpoint, stops,
    and starts again under the same handle (a sweep's trial: SWEEP/INDEX)."""
    from torchx.cli._run import check_handle
    from torchx.cli._sweep_cli import resolve_trial, sweep_id

    if sweep_id(handle):
        raise CliError(
            f"requeue: got {handle!r}, a sweep; requeue restarts one app, such as one trial "
            f"(torchx requeue {handle}/INDEX); to run again the trials that did not succeed: "
            f"torchx run --resume {handle}"
        )
    handle = resolve_trial(handle)
    check_handle(handle)
    status = _runner().requeue(handle)
    preemptions = status.num_preemptions if status is not None else 0
    state = status.state.name if status is not None else "UNKNOWN"
    typer.echo(f"requeued {handle} (preemption {preemptions}); now {state}")
    if status is not None and "cancel_grace_seconds" in status.msg:
        # local_cwd's message when the app was killed past the grace, checkpoint maybe
        # incomplete: a requeue that worked but may resume from an older checkpoint.
        # Only that one: other schedulers' messages of a running app are their state words.
        typer.echo(f"warning: {status.msg}", err=True)
    if status is not None:
        from torchx.cli._attempt_record import record_requeue

        for problem in record_requeue(handle, status):
            typer.echo(f"warning: {problem}", err=True)
