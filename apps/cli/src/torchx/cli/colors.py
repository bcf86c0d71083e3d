"""ANSI colours for terminal output; every one is ``""`` when stdout is not a terminal."""

from __future__ import annotations

import sys

_TTY = not sys.stdout.closed and sys.stdout.isatty()

GREEN = "\033[32m" if _TTY else ""
BLUE = "\033[34m" if _TTY else ""
ORANGE = "\033[38;2;238;76;44m" if _TTY else ""
GRAY = "\033[2m" if _TTY else ""
ENDC = "\033[0m" if _TTY else ""

__all__ = ["BLUE", "ENDC", "GRAY", "GREEN", "ORANGE"]
