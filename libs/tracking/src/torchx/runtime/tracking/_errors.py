"""Exceptions raised by result trackers.

Every error carries the offending key (and field or path where there is one) both as
attributes and in its message, so a failing app's log says what to fix without a
debugger.
"""

from __future__ import annotations


def _short_repr(key: object) -> str:
    """repr of a key, with huge ints (whose repr may even fail) shortened."""
    if isinstance(key, int) and not isinstance(key, bool) and key.bit_length() > 256:
        return f"<int of {key.bit_length()} bits>"
    return repr(key)


class TrackerError(Exception):
    """Base class of every error a result tracker raises on purpose."""


class InvalidKeyError(TrackerError, ValueError):
    """A key that is not an int or a safe relative name under the tracker's base."""

    def __init__(self, key: object, reason: str) -> None:
        self.key = key
        self.reason = reason
        super().__init__(f"invalid tracker key {_short_repr(key)}: {reason}")

    def __reduce__(self) -> tuple[type, tuple[object, str]]:
        return type(self), (self.key, self.reason)


class InvalidResultError(TrackerError, ValueError):
    """A result value (or the results as a whole) that the tracker does not store."""

    def __init__(self, key: str, field: str | None, reason: str) -> None:
        self.key = key
        self.field = field
        self.reason = reason
        where = f"field {field!r} of key {key!r}" if field is not None else f"key {key!r}"
        super().__init__(f"invalid result for {where}: {reason}; nothing was written")

    def __reduce__(self) -> tuple[type, tuple[str, str | None, str]]:
        return type(self), (self.key, self.field, self.reason)


class ResultNotFoundError(TrackerError, KeyError):
    """No results are stored under the key.

    A ``KeyError``, so ``tracker[key]`` behaves like a mapping lookup.
    """

    def __init__(self, key: str, tracker_base: str) -> None:
        self.key = key
        self.tracker_base = tracker_base
        super().__init__(f"no results for key {key!r} in tracker base {tracker_base!r}")

    def __str__(self) -> str:
        # KeyError.__str__ would repr() the message and wrap it in quotes.
        return str(self.args[0])

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.key, self.tracker_base)


class CorruptResultError(TrackerError, ValueError):
    """A stored document that is not a JSON object of int, float and str values."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"corrupt result document at {path!r}: {reason}")

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.path, self.reason)
