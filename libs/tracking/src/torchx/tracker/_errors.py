"""Errors of torchx.tracker: each names what was wrong, the value, and what to do instead."""

from __future__ import annotations


class TrackerError(ValueError):
    """Base of every error torchx.tracker raises about bad input or stored records.

    ``except TrackerError`` catches a bad configuration, a record refused before
    anything was written, and a damaged stored record alike. It is a ``ValueError``,
    as each of them was before it had a common base.
    """


class TrackerConfigError(TrackerError):
    """A tracker that cannot be set up from its configuration."""

    def __init__(self, field: str, value: object, fix: str) -> None:
        self.field = field
        self.value = value
        self.fix = fix
        super().__init__(f"{field}: got {value!r}; {fix}")

    def __reduce__(self) -> tuple[type, tuple[str, object, str]]:
        return type(self), (self.field, self.value, self.fix)


class InvalidRecordError(TrackerError):
    """Metadata, an artifact or a source that a tracker does not store; nothing is written."""

    def __init__(self, field: str, value: object, fix: str) -> None:
        self.field = field
        self.value = value
        self.fix = fix
        super().__init__(f"{field}: got {value!r}; {fix}; nothing was written")

    def __reduce__(self) -> tuple[type, tuple[str, object, str]]:
        return type(self), (self.field, self.value, self.fix)


class CorruptRecordError(TrackerError):
    """A stored record that is not what this tracker writes."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"corrupt tracker record at {path!r}: {reason}")

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.path, self.reason)
