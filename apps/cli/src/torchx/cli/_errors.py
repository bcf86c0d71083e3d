"""How the CLI reports a failure: one line on stderr and exit code 2 (1 for a failed app)."""

from __future__ import annotations


class CliError(Exception):
    """A user error the CLI reports as ``torchx: error: MESSAGE``."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message, for errors that span several lines."""
    text = str(exc).strip() or type(exc).__name__
    first, _, rest = text.partition("\n")
    if rest.strip():
        # keep the first detail line too: multi-line errors list the problem below a header
        detail = rest.strip().splitlines()[0].strip()
        return f"{first} {detail}"
    return first
