"""Exceptions raised by result trackers.

Every error carries the offending key (and field or path where there is one) both as
attributes and in its message, so a failing app's log says what to fix without a
debugger.
"""

from __future__ import annotations

# Avoids importing typing at run time (the annotations are strings); the name
# TYPE_CHECKING is what type checkers look for.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar


def _short_repr(key: object) -> str:
    """repr of a key, with huge ints (whose repr may even fail) shortened."""
    if isinstance(key, int) and not isinstance(key, bool) and key.bit_length() > 256:
        return f"<int of {key.bit_length()} bits>"
    return repr(key)


class TrackerError(Exception):
    """Base class of every error a result tracker raises on purpose."""


class _RebuiltFromArguments(TrackerError):
    """An error whose constructor keeps each of its arguments as the attribute of the same
    name, listed in ``_arguments``, so that pickling (an error sent from a worker process
    to its parent) rebuilds it from them: Exception's own reduce would call the
    constructor with the message as its only argument. A user's subclass inherits its
    built-in class's list, so one that adds a parameter is rebuilt from that class's
    arguments, with the parameter added at its default."""

    _arguments: ClassVar[tuple[str, ...]]

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return type(self), tuple(getattr(self, name) for name in self._arguments)


class InvalidKeyError(_RebuiltFromArguments, ValueError):
    """A key that is not an int or a safe relative name under the tracker's base."""

    _arguments = ("key", "reason")

    def __init__(self, key: object, reason: str) -> None:
        self.key = key
        self.reason = reason
        super().__init__(f"invalid tracker key {_short_repr(key)}: {reason}")


class InvalidResultError(_RebuiltFromArguments, ValueError):
    """A result value (or the results as a whole) that the tracker does not store."""

    _arguments = ("key", "field", "reason")

    def __init__(self, key: str, field: str | None, reason: str) -> None:
        self.key = key
        self.field = field
        self.reason = reason
        where = f"field {field!r} of key {key!r}" if field is not None else f"key {key!r}"
        super().__init__(f"invalid result for {where}: {reason}; nothing was written")


class ResultNotFoundError(_RebuiltFromArguments, KeyError):
    """No results are stored under the key.

    A ``KeyError``, so ``tracker[key]`` behaves like a mapping lookup.
    """

    _arguments = ("key", "tracker_base")

    def __init__(self, key: str, tracker_base: str) -> None:
        self.key = key
        self.tracker_base = tracker_base
        super().__init__(f"no results for key {key!r} in tracker base {tracker_base!r}")

    def __str__(self) -> str:
        # KeyError.__str__ would repr() the message and wrap it in quotes.
        return str(self.args[0])


class CorruptResultError(_RebuiltFromArguments, ValueError):
    """A stored document that is not a JSON object of int, float and str values.

    Its subclass :class:`ResultTooLargeError` is a document that was not read at all
    because it is over the tracker's read limit, so ``except CorruptResultError`` catches
    every document a get could not return.
    """

    _arguments: ClassVar[tuple[str, ...]] = ("path", "reason")  # ResultTooLargeError's differ

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"corrupt result document at {path!r}: {reason}")


class ResultTooLargeError(CorruptResultError):
    """A stored document larger than the tracker reads (``max_document_bytes``): it was
    not read, so nothing says it is damaged. A :class:`CorruptResultError` only so that
    code catching unreadable documents catches this one too.

    ``size`` is the file's size in bytes, or None where the store could not tell it.
    """

    _arguments = ("path", "size", "limit")

    def __init__(self, path: str, size: int | None, limit: int) -> None:
        self.path = path
        self.size = size
        self.limit = limit
        self.reason = (
            f"{too_large_text(size, limit, document_limit_text(limit))}; it was not read, and is"
            " not known to be damaged: pass FsspecResultTracker(...,"
            " max_document_bytes=N) with N at least its size, or read it with fsspec at"
            " that path"
        )
        # CorruptResultError's "corrupt ..." head would misreport an intact document
        TrackerError.__init__(
            self, f"result document at {path!r} is too large to read: {self.reason}"
        )


def over_limit_text(size: int | None, limit: int) -> str:
    """The size of a file read as over ``limit`` bytes, as an error names it: ``"N bytes"``
    from the store's ``size``, or only ``"over <limit> bytes"`` where that does not show
    the file over (``_shows_over``)."""
    return f"{size} bytes" if _shows_over(size, limit) else f"over {limit} bytes"


def too_large_text(size: int | None, limit: int, limit_text: str) -> str:
    """Why a record or document read as over ``limit`` bytes (the read limit
    ``limit_text`` names) was not read: ``"it is N bytes, over the read limit L"`` from
    the store's ``size``, or only ``"it is over the read limit L"`` where that does not
    show the file over (``_shows_over``)."""
    over = f"over the read limit {limit_text}"
    return f"it is {size} bytes, {over}" if _shows_over(size, limit) else f"it is {over}"


def _shows_over(size: int | None, limit: int) -> bool:
    """Whether the store's ``size`` of a file read as over ``limit`` bytes shows it over:
    not where the store cannot say (None), gives 0 (a device: /dev/zero) or gives no more
    than the limit (the file shrank since it was read)."""
    return size is not None and size > limit


def document_limit_text(limit: int) -> str:
    """The read limit as an error names it: the constant when it is the default, else the
    ``max_document_bytes`` the tracker was made with."""
    from ._document import MAX_DOCUMENT_BYTES  # _document imports this module

    if limit == MAX_DOCUMENT_BYTES:
        return f"MAX_DOCUMENT_BYTES ({MAX_DOCUMENT_BYTES})"
    return f"max_document_bytes ({limit})"
