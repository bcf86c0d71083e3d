"""How documents are written and read on each kind of fsspec filesystem.

The goal everywhere is the same: a reader sees either the previous document or the
new one in full, never a partial write, even with several writers on one key. How to
get there depends on the backend:

* local disk (``LocalFileSystem``): the document is written to a hidden temporary file
  in the destination folder, then renamed over the destination with ``os.replace``.
  POSIX makes the rename atomic, so readers see the old or the new file. Atomicity is
  for concurrent readers; data is not fsync'ed, so a power cut may lose the latest put.
* whole-object stores (``memory``, ``s3``/``s3a``, ``gs``/``gcs``, ``az``/``abfs``/
  ``abfss``): one upload of the finished bytes. These stores publish an object only
  once it is complete (S3 ``PutObject``, for instance, is atomic and strongly
  consistent), and their "rename" is a copy plus delete, so a temporary name would
  add a request and a visible stray object without adding safety. On ``memory`` the
  file is built before it enters the store, within one process.
* any other backend: write a hidden temporary file next to the destination, then
  ``fs.mv`` it into place. This is atomic where the backend's move is a rename
  (SFTP, HDFS, ...); where a move is a copy, readers still never see a half-written
  temporary file, only what the backend's copy guarantees.

Temporary files start with '.', which keys never do, so listings skip them and a
writer that dies mid-put leaves only an ignorable hidden file behind.
"""

from __future__ import annotations

import contextlib
import os

# Avoids importing typing at run time (the annotations are strings); the name
# TYPE_CHECKING is what type checkers look for.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WHOLE_OBJECT_PROTOCOLS = frozenset({"memory", "s3", "s3a", "gs", "gcs", "az", "abfs", "abfss"})


def _temporary_name(path: str) -> str:
    folder, _, name = path.rpartition("/")
    return f"{folder}/.{name}.{os.urandom(8).hex()}.tmp"


class DocumentStore:
    """Reads and writes whole documents on one fsspec filesystem."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs

    def write(self, path: str, data: bytes) -> None:
        raise NotImplementedError

    def read(self, path: str, limit: int | None = None) -> bytes:
        """The document's bytes, at most ``limit`` + 1 of them (so a caller can tell that
        a file is over ``limit`` without holding all of it); FileNotFoundError if it does
        not exist."""
        if limit is None:
            data: bytes = self.fs.cat_file(path)
            return data
        try:
            data = self.fs.cat_file(path, start=0, end=limit + 1)
        except FileNotFoundError:
            raise
        except OSError:
            # S3 answers a range of an empty object with InvalidRange: no bytes to read.
            self.fs.invalidate_cache(path)
            if self.fs.isfile(path) and self.fs.size(path) == 0:
                return b""
            raise
        return data

    def size(self, path: str) -> int | None:
        """The file's size in bytes, for an error to name; None where the store cannot
        tell it (or the file is gone since)."""
        try:
            return int(self.fs.size(path))
        except (OSError, TypeError, ValueError):
            return None

    def is_file(self, path: str) -> bool:
        # Drop cached listings: another process may have written since we looked.
        self.fs.invalidate_cache(path)
        return bool(self.fs.isfile(path))

    def find(self, root: str) -> list[str]:
        """Paths of every file below ``root`` (none if it does not exist)."""
        self.fs.invalidate_cache(root)
        try:
            return list(self.fs.find(root))
        except FileNotFoundError:
            return []

    def list_folder(self, folder: str) -> list[tuple[str, bool]]:
        """``(name, is_folder)`` of each entry directly in ``folder`` (none if absent)."""
        self.fs.invalidate_cache(folder)
        try:
            entries = self.fs.ls(folder, detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return []
        prefix = folder.rstrip("/") + "/"
        out = []
        for entry in entries:
            name = str(entry["name"]).rstrip("/")
            if name.startswith(prefix):
                out.append((name[len(prefix) :], entry["type"] == "directory"))
        return out


class LocalStore(DocumentStore):
    """Local disk through the os module directly: temporary file, then os.replace."""

    def write(self, path: str, data: bytes) -> None:
        temporary = _temporary_name(path)
        # The open is inside the cleanup too: Ctrl-C can land after the file exists but
        # before open returns, and the empty temporary must not stay behind.
        try:
            try:
                handle = open(temporary, "wb")  # noqa: SIM115 (closed below, before the rename)
            except FileNotFoundError:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                handle = open(temporary, "wb")  # noqa: SIM115
            with handle:
                handle.write(data)
            os.replace(temporary, path)
        except BaseException:
            _remove_quietly(temporary)
            raise

    def read(self, path: str, limit: int | None = None) -> bytes:
        try:
            with open(path, "rb") as handle:
                if limit is None:
                    return handle.read()
                # read(n) sets n bytes aside first: ask for no more than the file holds
                return handle.read(min(os.fstat(handle.fileno()).st_size, limit) + 1)
        except NotADirectoryError:
            raise FileNotFoundError(path) from None

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def list_folder(self, folder: str) -> list[tuple[str, bool]]:
        try:
            with os.scandir(folder) as entries:
                return [(e.name, e.is_dir()) for e in entries]
        except (FileNotFoundError, NotADirectoryError):
            return []


class WholeObjectStore(DocumentStore):
    """Object stores that publish an upload only once it is complete: one upload."""

    def write(self, path: str, data: bytes) -> None:
        self.fs.pipe_file(path, data)


class RenameStore(DocumentStore):
    """Any other backend: temporary file beside the destination, then fs.mv."""

    def write(self, path: str, data: bytes) -> None:
        temporary = _temporary_name(path)
        self.fs.makedirs(path.rpartition("/")[0], exist_ok=True)
        # The upload is inside the cleanup too: Ctrl-C or a full disk part way through
        # leaves a partial temporary that nothing would ever remove.
        try:
            self.fs.pipe_file(temporary, data)
            self.fs.mv(temporary, path)
        except BaseException:
            # The upload's or move's error is the one worth reporting, not a failed cleanup.
            with contextlib.suppress(Exception):
                self.fs.rm_file(temporary)
            raise


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


def store_for(fs: Any) -> DocumentStore:
    """The write strategy for ``fs`` (see the module docstring)."""
    from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]

    if isinstance(fs, LocalFileSystem):
        return LocalStore(fs)
    protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
    if protocols & WHOLE_OBJECT_PROTOCOLS:
        return WholeObjectStore(fs)
    return RenameStore(fs)
