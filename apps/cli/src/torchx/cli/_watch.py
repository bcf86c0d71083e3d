"""``torchx status --watch``: the status of one app, redrawn in place until it ends.

On a terminal the previous drawing is erased (cursor up, clear to the end of the screen)
and each line is cut to the terminal's width, so a redraw always covers exactly what the
last one drew. Elsewhere (a pipe, a file) each different status is printed once, in turn.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TYPE_CHECKING

from torchx.cli._errors import CliError

if TYPE_CHECKING:
    from torchx.runner import Runner
    from torchx.specs import AppStatus

# ANSI: to the start of the line N lines up, then clear to the end of the screen.
_UP = "\x1b[{n}F"
_CLEAR_DOWN = "\x1b[J"


def watch_status(runner: Runner, handle: str, roles: list[str] | None, interval: float) -> None:
    """Draw the app's status every ``interval`` seconds (sooner when it ends) until it ends."""
    terminal = sys.stdout.isatty()
    drawn = 0
    last = ""
    while True:
        status = runner.status(handle)
        if status is None:
            raise CliError(f"app handle: got {handle!r}; no such app on its scheduler")
        text = _screen(handle, status, roles, interval)
        if terminal:
            width = shutil.get_terminal_size().columns
            lines = [ln[:width] for ln in text.splitlines()]
            if drawn:
                sys.stdout.write(_UP.format(n=drawn) + _CLEAR_DOWN)
            sys.stdout.write("\n".join(lines) + "\n")
            drawn = len(lines)
        elif _body(text) != last:
            sys.stdout.write(text + "\n")
        last = _body(text)
        sys.stdout.flush()
        if status.is_terminal():
            return
        # Returns as soon as the app ends on schedulers that are told; else after interval.
        started = time.monotonic()
        runner.wait(handle, wait_interval=interval, timeout=interval)
        time.sleep(max(0.0, min(0.05, interval - (time.monotonic() - started))))


def _screen(handle: str, status: AppStatus, roles: list[str] | None, interval: float) -> str:
    now = time.strftime("%H:%M:%S")
    ending = "ended" if status.is_terminal() else f"every {interval:g}s, Ctrl-C to stop"
    return f"{handle}  ({now}, {ending})\n" + status.format(roles).rstrip()


def _body(text: str) -> str:
    return text.split("\n", 1)[1] if "\n" in text else ""
