"""How every CLI command shows the tracker records its reads skipped: one line each on
stderr (``torchx: warning: ...``), naming the record and how to read it, instead of
Python's two-line warning; what could be read is printed as usual and the exit code
stays 0."""

from __future__ import annotations

import contextlib
import functools
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from torchx.tracker import UnreadRecordWarning

F = TypeVar("F", bound=Callable[..., Any])


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\n``, ``\\x1b``): ids, metadata and
    paths are any text an app chose, and a raw newline or terminal code would show one
    value as several lines, or restyle the terminal."""
    return re.sub(
        r"[\x00-\x1f\x7f-\x9f\u2028\u2029]",
        lambda m: m.group().encode("unicode_escape").decode("ascii"),
        text,
    )


def warn_line(text: str) -> None:
    """``torchx: warning: <text>`` on stderr, in one line."""
    print(f"torchx: warning: {printable(text)}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def skips_reported() -> Iterator[list[UnreadRecordWarning]]:
    """Within it, each record a tracker read skips is reported once (a lineage may read
    one record more than once) as a ``torchx: warning:`` line; other warnings show as
    Python shows them. Yields the list of every skip met, repeats included, in order,
    for a caller that must know what a read left out."""
    import warnings

    from torchx.tracker import UnreadRecordWarning

    skipped: list[UnreadRecordWarning] = []
    shown: set[str] = set()

    def show(message: Any, category: type[Warning], *where: Any, **more: Any) -> None:
        if not isinstance(message, UnreadRecordWarning):
            python_shows(message, category, *where, **more)
            return
        skipped.append(message)
        if str(message) not in shown:
            shown.add(str(message))
            warn_line(str(message))

    with warnings.catch_warnings():  # puts the filters and showwarning back after
        warnings.simplefilter("always", UnreadRecordWarning)
        python_shows = warnings.showwarning
        warnings.showwarning = show
        yield skipped


def skips_reported_by(read: F) -> F:
    """``read`` run within :func:`skips_reported`."""

    @functools.wraps(read)
    def reporting(*args: Any, **kwargs: Any) -> Any:
        with skips_reported():
            return read(*args, **kwargs)

    return reporting  # type: ignore[return-value]
