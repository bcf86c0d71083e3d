"""A result tracker over any fsspec URL: one JSON document per key."""

from __future__ import annotations

import os

from ._base import ResultTracker
from ._document import MAX_DOCUMENT_BYTES, decode_document, encode_document
from ._errors import (
    CorruptResultError,
    InvalidResultError,
    ResultNotFoundError,
    ResultTooLargeError,
    document_limit_text,
)
from ._keys import DOCUMENT_SUFFIX, normalize_key
from ._results import Results
from ._stores import DocumentStore, store_for

# Avoids importing typing at run time (the annotations are strings); the name
# TYPE_CHECKING is what type checkers look for.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class FsspecResultTracker(ResultTracker):
    """Keeps results under ``tracker_base``, any fsspec URL or local path.

    Key ``k`` is stored as the JSON document ``<tracker_base>/<k>.json``, e.g.
    ``{"accuracy": 0.233}``, so people and other tools can read results directly;
    '/' in a key makes subfolders. Two trackers with the same base see the same
    results, whichever process or machine they run in::

        tracker = FsspecResultTracker("s3://bucket/trainer/123")
        tracker["attempt_1/out"] = {"accuracy": 0.233}
        FsspecResultTracker("s3://bucket/trainer/123")["attempt_1/out"]["accuracy"]

    Writes are atomic for readers: a get sees a previous or the new document, never
    part of one. On local disk that is a temporary file renamed into place; on object
    stores (memory, S3, GCS, Azure) a single upload, which they publish only once
    complete; on other backends a temporary file moved into place with ``fs.mv``.
    See :mod:`torchx.runtime.tracking._stores` for what each backend guarantees.

    ``storage_options`` go to the filesystem, e.g. ``endpoint_url=...`` for an
    S3-compatible server; one the filesystem would ignore (a misspelt
    ``auto_mkdir`` for local disk) raises TypeError naming it. fsspec's
    ``FSSPEC_<PROTOCOL>_<OPTION>`` environment variables work as well. Listing (``in``,
    iteration, ``len``) always asks the store, never a cached listing, so it sees other
    processes' writes.

    A stored document that is not a JSON object of numbers and strings raises
    :class:`CorruptResultError` naming its path; one over ``max_document_bytes`` raises
    its subclass :class:`ResultTooLargeError`, naming its size and the limit.

    ``max_document_bytes`` (default :data:`MAX_DOCUMENT_BYTES`, 16 MiB) bounds what a
    put writes and a get reads of one document, and so the memory a get holds. Raise it
    to read larger documents, e.g. ones stored before torchx had this limit.
    """

    def __init__(
        self,
        tracker_base: str | os.PathLike[str],
        *,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
        **storage_options: Any,
    ) -> None:
        if isinstance(tracker_base, os.PathLike):
            tracker_base = os.fspath(tracker_base)
        if not isinstance(tracker_base, str) or not tracker_base.strip():
            raise ValueError(
                f"tracker_base must be a non-empty local path or fsspec URL"
                f" (e.g. '/tmp/results', 'memory://results', 's3://bucket/results'),"
                f" got {tracker_base!r}"
            )
        if (
            not isinstance(max_document_bytes, int)
            or isinstance(max_document_bytes, bool)
            or max_document_bytes < 1
        ):
            raise ValueError(
                f"max_document_bytes must be a whole number of bytes >= 1"
                f" (default MAX_DOCUMENT_BYTES, {MAX_DOCUMENT_BYTES}), got {max_document_bytes!r}"
            )
        self.max_document_bytes = max_document_bytes
        # fsspec is imported here, not at module level, so that importing the
        # package stays cheap for apps that only pass a tracker around.
        from fsspec.core import url_to_fs  # type: ignore[import-untyped]

        from ._storage_options import unknown_option

        ignored = unknown_option(tracker_base, storage_options, ("max_document_bytes",))
        if ignored is not None:  # as Python answers any unexpected keyword: TypeError
            raise TypeError(f"FsspecResultTracker({tracker_base!r}): {ignored}")
        try:
            fs, root = url_to_fs(tracker_base, **storage_options)
        except ValueError as e:  # fsspec's "Protocol not known: ..."
            raise ValueError(
                f"tracker_base {tracker_base!r}: {e}; give a local path or an fsspec URL"
                f" of an installed filesystem (e.g. '/tmp/results', 's3://bucket/results')"
            ) from None
        except ImportError as e:  # a known protocol whose package is not installed
            raise ImportError(f"tracker_base {tracker_base!r}: {e}", name=e.name) from None
        self.tracker_base = tracker_base
        self._root: str = root.rstrip("/")
        self._backend: DocumentStore = store_for(fs)

    @property
    def fs(self) -> Any:
        """The fsspec filesystem that holds the documents."""
        return self._backend.fs

    def path_of(self, key: int | str) -> str:
        """Where ``key``'s document is (or would be) stored, as a path on :attr:`fs`."""
        return self._path(normalize_key(key))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.tracker_base!r})"

    def _path(self, key: str) -> str:
        return f"{self._root}/{key}{DOCUMENT_SUFFIX}"

    def _store(self, key: str, results: Results) -> None:
        document = encode_document(results)
        limit = self.max_document_bytes
        if len(document) > limit:
            raise InvalidResultError(
                key,
                None,
                f"its document would be {len(document)} bytes, over {document_limit_text(limit)};"
                " the tracker is for small results, store large data elsewhere and record"
                " its path",
            )
        try:
            self._backend.write(self._path(key), document)
        except OSError as e:
            # The error would name a temporary file; name the key and base instead.
            # OSError(errno, ...) keeps the subclass (FileNotFoundError, PermissionError).
            raise OSError(
                e.errno,
                f"cannot store results for key {key!r} in tracker base {self.tracker_base!r}"
                f" ({e.strerror or e}); give a tracker_base this app can write",
            ) from None

    def _load(self, key: str) -> Results:
        path = self._path(key)
        try:
            data = self._backend.read(path, self.max_document_bytes)
        except FileNotFoundError:
            raise ResultNotFoundError(key, self.tracker_base) from None
        except IsADirectoryError:
            raise CorruptResultError(path, "it is a folder, not a document") from None
        if len(data) > self.max_document_bytes:
            raise ResultTooLargeError(path, self._backend.size(path), self.max_document_bytes)
        return decode_document(data, path)

    def _has(self, key: str) -> bool:
        return self._backend.is_file(self._path(key))

    def _list(self) -> list[str]:
        prefix = f"{self._root}/"
        keys = []
        for path in self._backend.find(self._root or "/"):
            if not (path.startswith(prefix) and path.endswith(DOCUMENT_SUFFIX)):
                continue
            key = path[len(prefix) : -len(DOCUMENT_SUFFIX)]
            if _is_addressable(key):
                keys.append(key)
        keys.sort()
        return keys


def _is_addressable(key: str) -> bool:
    """Whether a name found on the store is a key (not a temporary or foreign file)."""
    try:
        normalize_key(key)
    except ValueError:
        return False
    return True
