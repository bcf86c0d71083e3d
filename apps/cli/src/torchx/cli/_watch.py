"""``torchx status --watch``: the status of one app (or a sweep's table of trials), redrawn
in place until it ends.

On a terminal the previous drawing is erased (cursor up, clear to the end of the screen)
and each line is cut to the terminal's width, so a redraw always covers exactly what the
last one drew. Elsewhere (a pipe, a file) each different status is printed once, in turn.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from torchx.cli._errors import CliError

if TYPE_CHECKING:
    from torchx.cli._sweep_cli import Ranking
    from torchx.runner import Runner

# ANSI: to the start of the line N lines up, then clear to the end of the screen.
_UP = "\x1b[{n}F"
_CLEAR_DOWN = "\x1b[J"


def watch_status(runner: Runner, handle: str, roles: list[str] | None, interval: float) -> None:
    """Draw the app's status every ``interval`` seconds (sooner when it ends) until it ends."""

    def fetch() -> tuple[str, bool]:
        status = runner.status(handle)
        if status is None:
            from torchx.cli._sweep_cli import unknown_handle

            raise CliError(unknown_handle(handle))
        return status.format(roles).rstrip(), status.is_terminal()

    def pause() -> None:
        # Returns as soon as the app ends on schedulers that are told; else after interval.
        started = time.monotonic()
        runner.wait(handle, wait_interval=interval, timeout=interval)
        time.sleep(max(0.0, min(0.05, interval - (time.monotonic() - started))))

    watch(handle, fetch, pause, interval)


def watch_sweep(runner: Runner, handle: str, interval: float, ranking: Ranking) -> None:
    """Draw a sweep's table of trials every ``interval`` seconds until every trial ended:
    the table ``torchx status`` prints, ranked by the same objective. What reading the
    objectives warns of is drawn below the table, so that each redraw replaces it too
    rather than scrolling it out between redraws."""
    import contextlib
    import io

    from torchx.cli._sweep_cli import scored_status

    def fetch() -> tuple[str, bool]:
        with contextlib.redirect_stderr(io.StringIO()) as said:
            status, _ = scored_status(runner, handle, ranking)
        body = status.format(ranking.key).rstrip()
        warned = said.getvalue().rstrip()
        return (f"{body}\n{warned}" if warned else body), status.is_terminal()

    watch(handle, fetch, lambda: time.sleep(interval), interval)


def watch(
    handle: str, fetch: Callable[[], tuple[str, bool]], pause: Callable[[], None], interval: float
) -> None:
    """Draw what ``fetch`` gives (text, ended?) after each ``pause`` until it has ended."""
    terminal = sys.stdout.isatty()
    drawn = 0
    last = ""
    while True:
        body, ended = fetch()
        text = _screen(handle, body, ended, interval)
        if terminal:
            width = shutil.get_terminal_size().columns
            lines = [ln[:width] for ln in text.splitlines()]
            if drawn:
                sys.stdout.write(_UP.format(n=drawn) + _CLEAR_DOWN)
            sys.stdout.write("\n".join(lines) + "\n")
            drawn = len(lines)
        elif body != last:
            sys.stdout.write(text + "\n")
        last = body
        sys.stdout.flush()
        if ended:
            return
        pause()


def _screen(handle: str, body: str, ended: bool, interval: float) -> str:
    now = time.strftime("%H:%M:%S")
    ending = "ended" if ended else f"every {interval:g}s, Ctrl-C to stop"
    return f"{handle}  ({now}, {ending})\n{body}"
