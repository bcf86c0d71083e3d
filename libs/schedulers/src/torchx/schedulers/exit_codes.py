"""How an app's exit code reads to a person: a negative code is the signal that ended the
process (``subprocess`` and the local scheduler's records say so), worded once here for
the local scheduler's messages and the runner's function-app errors alike."""

from __future__ import annotations

import signal


def signal_name(code: int | None) -> str:
    """`` (killed by SIGKILL)`` for code -9, `` (killed by signal N)`` for a signal this
    platform has no name for, "" for None and any code that is not negative."""
    if code is None or code >= 0:
        return ""
    try:
        return f" (killed by {signal.Signals(-code).name})"
    except ValueError:
        return f" (killed by signal {-code})"


__all__ = ["signal_name"]
