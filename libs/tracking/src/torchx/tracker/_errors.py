"""Errors of torchx.tracker: each names what was wrong, the value, and what to do instead."""

from __future__ import annotations


class TrackerError(ValueError):
    """Base of every error torchx.tracker raises about bad input or stored records.

    ``except TrackerError`` catches a bad configuration, a record refused before
    anything was written, and a damaged stored record alike. It is a ``ValueError``,
    as each of them was before it had a common base.
    """


class _FieldError(TrackerError):
    """An error about one named field: the field, the value given, and how to fix it."""

    # what the message adds after the fix (whether anything was written, say)
    _after_fix = ""

    def __init__(self, field: str, value: object, fix: str) -> None:
        self.field = field
        self.value = value
        self.fix = fix
        super().__init__(f"{field}: got {value!r}; {fix}{self._after_fix}")

    def __reduce__(self) -> tuple[type, tuple[str, object, str]]:
        return type(self), (self.field, self.value, self.fix)


class TrackerConfigError(_FieldError):
    """A tracker that cannot be set up from its configuration."""


class InvalidRecordError(_FieldError):
    """Metadata, an artifact or a source that a tracker does not store; nothing is written."""

    _after_fix = "; nothing was written"


class CorruptRecordError(TrackerError):
    """A stored record that is not what this tracker writes, or (``damaged=False``) an
    intact one that this tracker will not read, such as one over its read limit.

    Reads do not raise it: they skip such a record with its subclass
    :class:`UnreadRecordWarning` and return the others, unless that warning is made an
    error."""

    def __init__(self, path: str, reason: str, damaged: bool = True) -> None:
        self.path = path
        self.reason = reason
        self.damaged = damaged
        head = "corrupt tracker record at {!r}: " if damaged else "tracker record at {!r} "
        super().__init__(head.format(path) + reason)

    def __reduce__(self) -> tuple[type, tuple[str, str, bool]]:
        return type(self), (self.path, self.reason, self.damaged)


class UnreadRecordWarning(CorruptRecordError, UserWarning):
    """A stored record that a read skipped, so that it could return the others: one
    that is damaged or of a newer format (``damaged``), or an intact one over the
    tracker's ``max_record_bytes``. The message names the record's path, why it was not
    read and, where there is one, how to read it.

    Also a :class:`CorruptRecordError`: ``warnings.simplefilter("error",
    UnreadRecordWarning)`` makes such a record fail the whole read instead, with an
    error that ``except CorruptRecordError`` (or ``TrackerError``) catches.
    """

    def __init__(self, path: str, reason: str, damaged: bool = True) -> None:
        self.path = path
        self.reason = reason
        self.damaged = damaged
        head = "corrupt tracker record" if damaged else "tracker record"
        TrackerError.__init__(
            self, f"{head} at {path!r} was skipped (the other records were read): {reason}"
        )


def warn_unread(unread: UnreadRecordWarning, depth: int) -> None:
    """Warn of a skipped record, dated to the line that called the public read (metadata,
    artifacts, run_ids...), ``depth`` calls above the caller of this function."""
    import warnings

    warnings.warn(unread, stacklevel=depth + 2)
