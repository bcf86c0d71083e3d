"""Errors of torchx.tracker: each names what was wrong, the value, and what to do instead."""

from __future__ import annotations


class TrackerError(ValueError):
    """Base of every error torchx.tracker raises about bad input or stored records.

    ``except TrackerError`` catches a bad configuration, a record refused before
    anything was written, and a damaged stored record alike. It is a ``ValueError``,
    as each of them was before it had a common base.
    """


# The most of a value's repr a message shows.
SHOWN_CHARS = 400


def shown(value: object) -> str:
    """``repr(value)`` as a message shows it: whole up to ``SHOWN_CHARS`` characters, then
    cut, so a message stays short however large the value (a stored record's field may
    hold megabytes)."""
    import reprlib  # only when a message is made

    cap = reprlib.Repr()
    cap.maxstring = cap.maxother = cap.maxlong = SHOWN_CHARS  # paths and URLs show whole
    # A dozen items (an options list's keys) show whole, where reprlib's default shows 6.
    # reprlib renders the whole capped tree before the cut below, so items**levels bounds
    # its work: 12 items over 3 levels is at most 1,728 values however deep the value.
    cap.maxlist = cap.maxtuple = cap.maxset = cap.maxfrozenset = cap.maxdeque = 12
    cap.maxarray = cap.maxdict = 12
    cap.maxlevel = 3
    text = cap.repr(value)  # a container of over 12 items, or deeper, is cut here
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


class _FieldError(TrackerError):
    """An error about one named field: the field, the value given, and how to fix it."""

    # what the message adds after the fix (whether anything was written, say)
    _after_fix = ""

    def __init__(self, field: str, value: object, fix: str) -> None:
        self.field = field
        self.value = value
        self.fix = fix
        super().__init__(f"{field}: got {shown(value)}; {fix}{self._after_fix}")

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
        super().__init__(self._message())

    def _message(self) -> str:
        if self.damaged:
            return f"corrupt tracker record at {self.path!r}: {self.reason}"
        return f"tracker record at {self.path!r} {self.reason}"

    def __reduce__(self) -> tuple[type, tuple[str, str, bool]]:
        return type(self), (self.path, self.reason, self.damaged)


class UnreadRecordWarning(CorruptRecordError, UserWarning):
    """A stored record that a read did not read: one that is damaged or of a newer format
    (``damaged``), or an intact one over the tracker's ``max_record_bytes``. The message
    names the record's path, why it was not read and how to read it (or the run without
    it).

    Reads warn with it and return the other records (for ``metadata()``, a key the record
    held may then show an older value). It is also a :class:`CorruptRecordError`:
    ``warnings.simplefilter("error", UnreadRecordWarning)`` makes such a record fail the
    whole read instead, with an error that ``except CorruptRecordError`` (or
    ``TrackerError``) catches. Its message is true either way.
    """

    def _message(self) -> str:
        head = "corrupt tracker record" if self.damaged else "tracker record"
        return f"{head} at {self.path!r} was not read: {self.reason}"


def warn_unread(unread: UnreadRecordWarning) -> None:
    """Warn of ``unread``, a record a read did not read, dated to the first line outside
    torchx.tracker: the user's call of the public read (metadata, run_ids, lineage...),
    however deep inside this package the record was met.

    The warning must be an instance never raised: a raised one's traceback keeps the
    reading frames, and so the record's bytes, alive for as long as anything
    (``catch_warnings(record=True)``, a test runner) keeps the warning; one that was
    raised is copied without it."""
    import inspect
    import warnings

    frame, level = inspect.currentframe(), 1  # stacklevel 1 names this function's line
    # matched by module name, not file path: a sourceless (.pyc only) or frozen install
    # keeps the path its code was compiled under, which need not be where it now lives
    while frame is not None and _in_package(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1
    del frame  # a frame held in a local keeps its callers alive
    if unread.__traceback__ is not None:
        unread = UnreadRecordWarning(unread.path, unread.reason, unread.damaged)
    warnings.warn(unread, stacklevel=level)


def _in_package(module: object) -> bool:
    """Whether ``module`` (a frame's ``__name__``) is torchx.tracker or one of its modules,
    its backends included."""
    return isinstance(module, str) and (
        module == "torchx.tracker" or module.startswith("torchx.tracker.")
    )
