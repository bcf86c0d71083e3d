"""Notes on exceptions on every Python this project supports."""

from __future__ import annotations

import sys

__all__ = ["add_note"]


def add_note(error: BaseException, note: str) -> None:
    """``error.add_note(note)``: Python 3.11's ``BaseException.add_note``, and on 3.10 what
    it does (appends to ``__notes__``, which 3.11's traceback prints and the CLI reads)."""
    if sys.version_info >= (3, 11):
        error.add_note(note)
    else:
        error.__notes__ = [*getattr(error, "__notes__", ()), note]  # type: ignore[attr-defined]
