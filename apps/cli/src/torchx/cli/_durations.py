"""Durations and points in time as people type them: ``90``, ``30s``, ``10m``, ``2h``,
``7d``, or an ISO 8601 time (``2024-05-01T12:00``)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from torchx.cli._errors import CliError

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.IGNORECASE)


def parse_duration(field: str, text: str) -> float:
    """Seconds in ``text`` (a number of seconds, or a number with s, m, h, d or w)."""
    match = _DURATION.match(text)
    if not match:
        raise CliError(f"{field}: got {text!r}; expected a duration such as 90, 30s, 10m, 2h or 7d")
    return float(match.group(1)) * _UNITS[(match.group(2) or "s").lower()]


def parse_since(field: str, text: str, now: datetime | None = None) -> datetime:
    """The time ``text`` names: a duration back from now (``10m``) or an ISO 8601 time."""
    if _DURATION.match(text):
        return (now or datetime.now()) - timedelta(seconds=parse_duration(field, text))
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise CliError(
            f"{field}: got {text!r}; expected a duration back from now (10m, 2h, 7d) or a "
            "time such as 2024-05-01T12:00"
        ) from None


def short_duration(seconds: float) -> str:
    """``seconds`` as 42s, 3m05s, 2h10m or 4d03h."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"
