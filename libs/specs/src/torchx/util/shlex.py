"""Shell quoting: ``join`` is the standard library's ``shlex.join`` under 0.7's path."""

from __future__ import annotations

import shlex as _shlex
from collections.abc import Iterable


def join(args: Iterable[str]) -> str:
    """``args`` as one shell command line, each quoted as needed."""
    return " ".join(_shlex.quote(arg) for arg in args)


__all__ = ["join"]
