"""How the CLI reports a failure: one line on stderr and exit code 2 (1 for a failed app)."""

from __future__ import annotations

# The options of ``torchx`` itself that change how a command runs; they go before the
# command word (a test checks them against the root command).
ROOT_FLAGS = frozenset({"--debug", "--log_level", "--log-level"})


def misplaced_root_flag(token: str, command: str) -> str | None:
    """Why ``token``, written after the command word, is refused when it is one of
    :data:`ROOT_FLAGS` (None when it is not): where it goes instead. ``command`` is the
    command as the example shows it (``status``, ``run COMPONENT``)."""
    flag = token.partition("=")[0]
    if flag not in ROOT_FLAGS:
        return None
    return (
        f"{flag} is an option of torchx itself: put it before the command "
        f"(torchx {flag} ... {command} ...)"
    )


class CliError(Exception):
    """A user error the CLI reports as ``torchx: error: MESSAGE``."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def interrupted(signum: int = 2, exc: BaseException | None = None) -> int:
    """Say that a signal stopped the command (one line on stderr); the shell's exit code
    for a process killed by ``signum``: 130 for Ctrl-C's SIGINT, 143 for SIGTERM. The
    notes (PEP 678) of the interrupt ``exc`` join the line: what it left running (a sweep
    submitted just before it).

    Every path that meets a stop (see :func:`stop_signal`) answers with this line:
    ``torchx.cli.main.run`` while the command's modules load, a plugin command, and a
    builtin command once typer has turned the interrupt into its exit code. The first
    tens of milliseconds, while Python imports ``torchx.cli.main`` itself for the console
    script, come before any of torchx's code runs: a Ctrl-C there still gives Python's
    traceback.
    """
    import sys

    notes = [n for n in getattr(exc, "__notes__", ()) if isinstance(n, str)]
    print("; ".join(["torchx: interrupted", *notes]), file=sys.stderr)
    return 128 + signum


def stop_signal(exc: BaseException) -> int | None:
    """The signal ``exc`` says the command was told to stop by, else None (an error).

    Ctrl-C is a KeyboardInterrupt (SIGINT). Once a local scheduler is made, SIGTERM raises
    its ``SignalException`` (as 0.7's did, so that a waiting command can clean up): a stop
    like Ctrl-C, not an error of the command.
    """
    if isinstance(exc, KeyboardInterrupt):
        return 2
    import sys

    # SignalException can only have been raised if its module was loaded: an ordinary
    # error never loads it
    local = sys.modules.get("torchx.schedulers.local_scheduler")
    if local is not None and isinstance(exc, local.SignalException):
        return int(getattr(exc, "sigval", 15))
    return None


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message, for errors that span several lines.

    An error that does not name its field (not a ``SpecsError``) but carries notes (PEP 678;
    the component that raised it, say) gets its type and those notes on the line.
    """
    notes = [n for n in getattr(exc, "__notes__", ()) if isinstance(n, str)]
    if notes:
        from torchx.specs import SpecsError  # only paid for on the error path

        if not isinstance(exc, SpecsError):
            first = (str(exc).strip() or "(no message)").partition("\n")[0]
            where = "; ".join(notes)
            return f"{type(exc).__name__}: {first} ({where}; --debug shows the traceback)"
    text = str(exc).strip() or type(exc).__name__
    first, _, rest = text.partition("\n")
    if rest.strip():
        # keep the first detail line too: multi-line errors list the problem below a header
        detail = rest.strip().splitlines()[0].strip()
        return f"{first} {detail}"
    return first


def msg_line(msg: str) -> str:
    """An app status message's first line, for a one-line report. A first line that ends
    with ":" introduces the lines below it (``...; last lines of its stderr:``), which are
    not shown here: the clause that announces them is left out."""
    first = msg.strip().partition("\n")[0].rstrip()
    if first.endswith(":"):
        head, sep, _ = first.rpartition("; ")
        first = head if sep else first[:-1]
    return first


def install_hint(exc: BaseException) -> str | None:
    """For a scheduler whose client library is missing: the ``torchx`` extra that has it.

    The schedulers name their own distribution's extra (``torchx-schedulers[ray]``). Whoever
    runs this command installed ``torchx``, whose extras of the same names pass through to
    those, so the line names ``torchx[EXTRA]``.
    """
    from torchx.schedulers import MissingDependencyError  # only paid for on the error path

    if not isinstance(exc, MissingDependencyError):
        return None
    return (
        f"the {exc.scheduler} scheduler needs the {exc.module!r} package, which is not "
        f'installed; install it with: pip install "torchx[{exc.extra}]"'
    )
