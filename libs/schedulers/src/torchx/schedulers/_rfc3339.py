"""Times as the container engine and Kubernetes write them (RFC 3339: ``Z`` or an offset,
up to nanoseconds), turned into the one form every scheduler here hands on: this machine's
local time without a zone, as ``datetime.fromtimestamp`` gives it. One form lets the CLI
sort and filter the apps of any scheduler (a zone-aware time does not compare with a naive
one) and print them all in the same clock."""

from __future__ import annotations

import re
from datetime import datetime, timezone

_STAMP = re.compile(r"(?P<head>[^.]+?)(?:\.(?P<frac>\d+))?(?P<zone>[Zz]|[+-]\d\d:\d\d)?$")


def parse_utc(text: str | None) -> datetime | None:
    """``text`` as a zone-aware time (UTC where it names no zone), or None if it is not one.
    Go's zero time (year 1), which the container engine writes for a time not reached yet
    (the finish of a running container), is None too: it means "no time", and in a zone west
    of UTC it has no local form (year 0)."""
    match = _STAMP.match(text or "")
    if match is None:
        return None
    zone = match["zone"]
    head = match["head"] + (zone if zone and zone not in "Zz" else "")
    try:
        t = datetime.fromisoformat(head)
    except ValueError:
        return None
    if t.year <= 1:
        return None
    frac = match["frac"]
    if frac:  # nanoseconds: Python keeps microseconds
        t = t.replace(microsecond=int(frac[:6].ljust(6, "0")))
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def local_time(t: datetime) -> datetime:
    """``t`` in this machine's local time, without a zone (a naive ``t`` is kept as it is)."""
    return t if t.tzinfo is None else t.astimezone().replace(tzinfo=None)


def parse_local(text: str | None) -> datetime | None:
    """``text`` as this machine's local time without a zone, or None if it is not a time."""
    t = parse_utc(text)
    return None if t is None else local_time(t)
