"""Where a call's files live: a folder given as a local path or any fsspec URL.

Local folders are written with the owner's permissions only (folders 0700, files 0600) and
each file appears whole (written aside, then renamed), so a reader never sees half a
result. Other fsspec URLs write each file in one ``pipe_file``, which object stores apply
whole; who may read them is up to the store's own access rules.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
import uuid
from typing import Any

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def is_local(url: str) -> bool:
    """Whether ``url`` names a folder on this machine's file system (a path or file://)."""
    return "://" not in url or url.startswith("file://")


def local_path(url: str) -> str:
    return url[len("file://") :] if url.startswith("file://") else url


def join(url: str, *names: str) -> str:
    return "/".join([url.rstrip("/"), *names])


def child_name(folder: str, url: str) -> str | None:
    """The name of the entry ``url`` names directly inside the folder ``folder``, or None
    when it names anything else (the folder itself, a deeper path, a path elsewhere, or a
    local path whose folder leads elsewhere through a link or ``..``).

    The entry itself is named, never what it leads to: a link ``folder/x`` to a sibling
    ``folder/y`` is ``x`` (so removing it removes the link, not the sibling)."""
    if is_local(folder) != is_local(url):
        return None
    if is_local(folder):
        # the folder's path resolved, the last part as written (``..`` only leaves)
        parent, name = os.path.split(local_path(url).rstrip("/"))
        inside = os.path.realpath(parent or ".") == os.path.realpath(local_path(folder))
        return name if inside and name not in ("", ".", "..") else None
    scheme, _, path = url.partition("://")
    folder_scheme, _, folder_path = folder.partition("://")
    parent, name = posixpath.split(posixpath.normpath(path))
    same = scheme == folder_scheme and parent == posixpath.normpath(folder_path)
    return name if same and name not in ("", ".", "..") else None


class UntrustedFileError(PermissionError):
    """A file that would be unpickled is writable by someone other than its reader.

    Reading a pickle runs code, so a file another user could have written is refused.
    """


def check_private(path: str, any_owner: bool = False) -> None:
    """Refuse ``path`` (and its folder) unless owned by this user and writable by no other.

    ``any_owner`` skips the owner comparison: a job that runs as root inside a container
    reads what the launching user wrote. Local paths only: remote stores have no owner to
    compare with (see the README).
    """
    me = os.geteuid()
    for where in (os.path.dirname(path) or ".", path):
        try:
            st = os.stat(where)
        except FileNotFoundError:
            continue
        if st.st_uid != me and not any_owner:
            raise UntrustedFileError(
                f"{where} is owned by uid {st.st_uid}, not by you (uid {me}); a result file "
                "runs code when it is read, so keep the transport folder where only you can "
                "write (give the executor a folder of your own)"
            )
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise UntrustedFileError(
                f"{where} is writable by others (mode {stat.S_IMODE(st.st_mode):o}); a result "
                f"file runs code when it is read, so make it private (chmod go-w {where})"
            )


class Store:
    """Reads and writes whole files under one folder URL."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/") or "/"
        self._local = is_local(url)
        self._fs: Any = None
        self._root = local_path(self.url) if self._local else ""
        if not self._local:
            # fsspec only for remote URLs: a local job then starts without importing it.
            import fsspec.core  # type: ignore[import-untyped]

            self._fs, self._root = fsspec.core.url_to_fs(self.url)

    @property
    def local(self) -> bool:
        return self._local

    def path(self, name: str) -> str:
        return join(self._root, name) if name else self._root

    def make_folder(self, name: str = "") -> None:
        """Create the folder (0700 when local); an existing one is left as it is."""
        where = self.path(name)
        if self._local:
            try:
                os.makedirs(where, mode=FOLDER_MODE)
            except FileExistsError:
                return
            os.chmod(where, FOLDER_MODE)  # makedirs' mode is filtered by the umask
        else:
            self._fs.makedirs(where, exist_ok=True)

    def write(self, name: str, data: bytes) -> None:
        where = self.path(name)
        if not self._local:
            self._fs.pipe_file(where, data)
            return
        aside = f"{where}.{uuid.uuid4().hex}.part"
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(aside, where)
        except BaseException:
            if os.path.exists(aside):
                os.unlink(aside)
            raise

    def read(self, name: str, any_owner: bool = False, limit: int | None = None) -> bytes:
        """The file's bytes; a local file must pass ``check_private`` first.

        With ``limit``, at most ``limit`` + 1 bytes are read: a result longer than
        ``limit`` shows as such without the whole file ever being held.
        """
        where = self.path(name)
        size = -1 if limit is None else limit + 1
        if not self._local:
            if limit is None:
                whole: bytes = self._fs.cat_file(where)
                return whole
            with self._fs.open(where, "rb") as remote:
                head: bytes = remote.read(size)
                return head
        check_private(where, any_owner)
        with open(where, "rb") as f:
            if size >= 0:
                # read(n) makes room for n bytes first: ask for no more than the file holds
                # and the one byte that shows a longer file, so a raised limit costs nothing
                # (a torchx file appears whole: it cannot grow meanwhile)
                size = min(size, os.fstat(f.fileno()).st_size + 1)
            return f.read(size)

    def exists(self, name: str) -> bool:
        where = self.path(name)
        return os.path.exists(where) if self._local else bool(self._fs.exists(where))

    def names(self) -> list[str]:
        """The names in the folder (none when it does not exist)."""
        if self._local:
            try:
                return sorted(os.listdir(self._root))
            except FileNotFoundError:
                return []
        if not self._fs.exists(self._root):
            return []
        return sorted(
            p.rstrip("/").rsplit("/", 1)[-1] for p in self._fs.ls(self._root, detail=False)
        )

    def remove(self, name: str) -> None:
        """Remove file ``name``; one already gone is no error."""
        where = self.path(name)
        try:
            if self._local:
                os.unlink(where)
            else:
                self._fs.rm_file(where)
        except FileNotFoundError:
            pass

    def remove_tree(self, name: str) -> None:
        """Remove the folder ``name`` and all in it (a local link: the link alone); one
        already gone is no error, one that cannot be removed raises OSError."""
        where = self.path(name)
        if self._local:
            import shutil  # only the launcher removes: a job starts without it

            with contextlib.suppress(FileNotFoundError):  # removed meanwhile
                if os.path.islink(where):
                    os.unlink(where)  # the link, never what it leads to
                else:
                    shutil.rmtree(where)
        elif self._fs.exists(where):
            self._fs.rm(where, recursive=True)
