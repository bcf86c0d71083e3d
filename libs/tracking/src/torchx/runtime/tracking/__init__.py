"""Small results that travel between apps, over any fsspec URL.

An app writes ``tracker[key] = {"accuracy": 0.9}``; another app, later and elsewhere,
opens a tracker on the same base and reads ``tracker[key]["accuracy"]``.

Importing this package is cheap: fsspec is imported when the first
:class:`FsspecResultTracker` is created.
"""

from ._base import Key, ResultTracker
from ._document import MAX_DOCUMENT_BYTES
from ._errors import (
    CorruptResultError,
    InvalidKeyError,
    InvalidResultError,
    ResultNotFoundError,
    ResultTooLargeError,
    TrackerError,
)
from ._fsspec import FsspecResultTracker
from ._keys import MAX_KEY_BYTES, MAX_SEGMENT_BYTES
from ._results import MAX_STR_BYTES, Result, Results
from ._sweep import sweep_trial_key

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_KEY_BYTES",
    "MAX_SEGMENT_BYTES",
    "MAX_STR_BYTES",
    "CorruptResultError",
    "FsspecResultTracker",
    "InvalidKeyError",
    "InvalidResultError",
    "Key",
    "Result",
    "ResultNotFoundError",
    "ResultTooLargeError",
    "ResultTracker",
    "Results",
    "TrackerError",
    "sweep_trial_key",
]

# Show the public import path in tracebacks and reprs, not the private module.
for _public in (
    CorruptResultError,
    FsspecResultTracker,
    InvalidKeyError,
    InvalidResultError,
    ResultNotFoundError,
    ResultTooLargeError,
    ResultTracker,
    TrackerError,
    sweep_trial_key,
):
    _public.__module__ = __name__
del _public
