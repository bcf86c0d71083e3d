"""``torchx wait``: block until apps end; exit 0 only when every one SUCCEEDED."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from torchx.cli._errors import CliError

if TYPE_CHECKING:
    from torchx.runner import Runner
    from torchx.specs import AppStatus

# Exit codes, most serious first: a handle no scheduler knows, an app that did not
# succeed, an app still running when --timeout ran out (124, as coreutils' timeout).
EXIT_UNKNOWN = 2
EXIT_FAILED = 1
EXIT_TIMED_OUT = 124


def wait_command(
    runner: Runner, handles: list[str], timeout: float | None, json_out: bool, interval: float
) -> int:
    """Print one line (or JSON object) per app as it ends; returns the exit code."""
    from torchx.cli._run import check_handle
    from torchx.specs import AppState

    if not handles:
        raise CliError("wait: give at least one app handle (SCHEDULER://SESSION/APP_ID)")
    for handle in handles:
        check_handle(handle)
    worst = 0
    for handle, status in runner.wait_each(handles, timeout=timeout, wait_interval=interval):
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


def _as_line(handle: str, status: AppStatus | None, code: int, timeout: float | None) -> str:
    from torchx.cli._durations import short_duration

    if status is None:
        return f"{handle} UNKNOWN: no such app on its scheduler"
    line = f"{handle} {status.state.name}"
    if code == EXIT_TIMED_OUT:
        return f"{line}: still running after {short_duration(timeout or 0)} (--timeout)"
    if code and status.msg:
        return f"{line}: {status.msg.strip().splitlines()[0]}"
    return line


def _as_json(handle: str, status: AppStatus | None, code: int) -> dict[str, object]:
    out: dict[str, object] = {"handle": handle}
    if status is None:
        out.update(state="UNKNOWN", error="no such app on its scheduler")
    else:
        out.update(status.to_dict())
    out["timed_out"] = code == EXIT_TIMED_OUT
    return out
