"""How every command reports an error: one line on stderr, exit code 2 (1 for a failed app).

Kept apart from ``_app`` so that command modules (``_tracker``, ``_wait``...) can wrap their
commands without importing the module that registers them.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from torchx.cli._errors import CliError, install_hint, one_line, stop_signal

F = TypeVar("F", bound=Callable[..., Any])

# Set by the root callback from ``--debug``: show tracebacks instead of one line.
debug_state = {"debug": False}


def handled(fn: F) -> F:
    """Turn any error of a command into one line on stderr and exit code 2.

    A stop (Ctrl-C, SIGTERM) is no error: it goes on to the one line and exit code that
    ``run_builtin`` gives every stop. A failed app is exit code 1
    (``CliError(..., exit_code=1)``); ``--debug`` shows the traceback instead.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except BrokenPipeError:
            # The reader went away (`torchx list | head`): stop quietly, as Unix tools do.
            silence_stdout()
            raise typer.Exit(0) from None
        except Exception as e:
            # SIGTERM's SignalException is a stop, answered as Ctrl-C is (``run_builtin``)
            if debug_state["debug"] or stop_signal(e) is not None:
                raise
            code = e.exit_code if isinstance(e, CliError) else 2
            message = install_hint(e) or one_line(e)
            typer.echo(f"torchx: error: {message}", err=True)
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush raises nothing."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
