"""Copying between fsspec URLs, for ``utils.copy``'s program (``torchx.apps.utils.copy_main``)
and ``serve.torchserve``'s upload.

Copies one file, or a directory tree file by file, between any two fsspec URLs. Each file
is streamed in chunks, so a large file never sits whole in memory.
"""

from __future__ import annotations

import posixpath
from typing import Any

_CHUNK = 4 * 1024 * 1024


def _copy_file(src_fs: Any, src: str, dst_fs: Any, dst: str) -> None:
    parent = posixpath.dirname(dst)
    if parent:
        dst_fs.makedirs(parent, exist_ok=True)
    with src_fs.open(src, "rb") as fin, dst_fs.open(dst, "wb") as fout:
        while chunk := fin.read(_CHUNK):
            fout.write(chunk)


def copy(src: str, dst: str) -> int:
    """Copy ``src`` to ``dst``; returns the number of files copied."""
    from fsspec.core import url_to_fs  # type: ignore[import-untyped]

    src_fs, src_path = url_to_fs(src)
    dst_fs, dst_path = url_to_fs(dst)
    if not src_fs.exists(src_path):
        raise FileNotFoundError(f"--src: {src!r} does not exist")
    if not src_fs.isdir(src_path):
        _copy_file(src_fs, src_path, dst_fs, dst_path)
        return 1
    root = src_path.rstrip("/")
    files = src_fs.find(root)
    dst_fs.makedirs(dst_path, exist_ok=True)
    for f in files:
        rel = f[len(root) :].lstrip("/")
        _copy_file(src_fs, f, dst_fs, posixpath.join(dst_path.rstrip("/"), rel))
    return len(files)
