"""``torchx wait``: block until apps (or sweeps: all their trials) end; exit 0 only when
every one SUCCEEDED."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from torchx.cli._errors import CliError, msg_line

if TYPE_CHECKING:
    from torchx.runner import Runner, SweepStatus
    from torchx.specs import AppStatus

# Exit codes, most serious first: a handle no scheduler knows, an app that did not
# succeed, an app still running when --timeout ran out (124, as coreutils' timeout).
EXIT_UNKNOWN = 2
EXIT_FAILED = 1
EXIT_TIMED_OUT = 124


def wait_command(
    runner: Runner, handles: list[str], timeout: float | None, json_out: bool, interval: float
) -> int:
    """Print one line (or JSON object) per app or sweep as it ends; returns the exit code."""
    from torchx.cli._run import check_handle
    from torchx.cli._sweep_cli import resolve_trial
    from torchx.specs import AppState

    if not handles:
        raise CliError("wait: give at least one app handle (SCHEDULER://SESSION/APP_ID)")
    # a sweep's trial (SWEEP/INDEX) is waited on as its app, and shown as it was given
    given = {resolve_trial(h, runner): h for h in handles}
    for handle in given:
        check_handle(handle)
    worst = 0
    each_end = runner.wait_each(list(given), timeout=timeout, wait_interval=interval)
    for app_or_sweep, status in each_end:
        handle = given.get(app_or_sweep, app_or_sweep)
        if status is None:
            code = EXIT_UNKNOWN
        elif status.state == AppState.SUCCEEDED:
            code = 0
        elif status.is_terminal():
            code = EXIT_FAILED
        else:
            code = EXIT_TIMED_OUT
        worst = _more_serious(worst, code)
        if json_out:
            print(json.dumps(_as_json(handle, status, code)), flush=True)
        else:
            print(_as_line(handle, status, code, timeout), flush=True)
    return worst


def _more_serious(a: int, b: int) -> int:
    rank = {0: 0, EXIT_TIMED_OUT: 1, EXIT_FAILED: 2, EXIT_UNKNOWN: 3}
    return a if rank[a] >= rank[b] else b


def _as_line(
    handle: str, status: AppStatus | SweepStatus | None, code: int, timeout: float | None
) -> str:
    from torchx.cli._durations import short_duration
    from torchx.specs import AppStatus

    if status is None:
        from torchx.cli._sweep_cli import no_such

        return f"{handle} UNKNOWN: {no_such(handle)}"
    line = f"{handle} {status.state.name}"
    if code == EXIT_TIMED_OUT:
        return f"{line}: still running after {short_duration(timeout or 0)} (--timeout)"
    if not code:
        return line
    if not isinstance(status, AppStatus):
        # which trials did not succeed, counted; their table is one command away
        return (
            f"{line}: {status.summary()} of {len(status.trials)} trials (torchx status lists them)"
        )
    why = msg_line(status.msg)
    return f"{line}: {why}" if why else line


def _as_json(handle: str, status: AppStatus | SweepStatus | None, code: int) -> dict[str, object]:
    from torchx.specs import AppStatus

    out: dict[str, object] = {"handle": handle}
    if status is None:
        from torchx.cli._sweep_cli import no_such

        out.update(state="UNKNOWN", error=no_such(handle))
    elif isinstance(status, AppStatus):
        out.update(status.to_dict())
    else:
        from torchx.cli._sweep_cli import sweep_json

        out.update(sweep_json(status))
    out["timed_out"] = code == EXIT_TIMED_OUT
    return out
