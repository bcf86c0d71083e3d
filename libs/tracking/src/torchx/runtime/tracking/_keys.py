"""Turning user keys into safe relative names under a tracker's base.

A key becomes a path below the base, so anything that could climb out of it, alias
another key, or clash with the tracker's own temporary and document names is refused
here, before any backend sees it.
"""

from __future__ import annotations

from functools import lru_cache

from ._errors import InvalidKeyError

MAX_KEY_BYTES = 1024
"""Longest key accepted, in UTF-8 bytes (object stores cap keys near this size)."""

MAX_SEGMENT_BYTES = 200
"""Longest '/'-separated part of a key, in UTF-8 bytes.

Local filesystems cap a file name at 255 bytes; the margin leaves room for the
document suffix and the temporary name used while writing.
"""

DOCUMENT_SUFFIX = ".json"

_CONTROL_CHARACTERS = frozenset(chr(c) for c in (*range(0x20), 0x7F))


def normalize_key(key: object) -> str:
    """The key as the relative name its document is stored under, or InvalidKeyError."""
    kind = type(key)
    if kind is str:
        return _check_str_key(key)
    if isinstance(key, bool) or not isinstance(key, int | str):
        raise InvalidKeyError(key, f"keys are int or str, got {kind.__name__}")
    if isinstance(key, int):
        # An int key is stored under its decimal text, so the text's rules apply to it.
        # 4 bits per digit at most: an int this long has more digits than a key may have
        # (and its text may not even be computable).
        if key.bit_length() > MAX_KEY_BYTES * 4:
            raise InvalidKeyError(
                key, f"a key is at most {MAX_KEY_BYTES} bytes in UTF-8, this int has more digits"
            )
        try:
            return _check_str_key(str(int(key)))
        except InvalidKeyError as err:
            raise InvalidKeyError(key, err.reason) from None
    # A str subclass: check (and remember) its plain text, not the subclass object.
    return _check_str_key(str.__str__(key))


# Apps reuse a handful of keys (put, then get, then `in`); remembering the ones that
# passed keeps the checks off the hot path. Refused keys raise, so are never cached.
@lru_cache(maxsize=4096)
def _check_str_key(key: str) -> str:
    if not key:
        raise InvalidKeyError(key, "a key must not be empty")
    try:
        size = len(key.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidKeyError(key, "a key must be encodable as UTF-8") from None
    if size > MAX_KEY_BYTES:
        raise InvalidKeyError(
            key, f"a key is at most {MAX_KEY_BYTES} bytes in UTF-8, this one is {size}"
        )
    if "\x00" in key:
        raise InvalidKeyError(key, "a key must not contain a NUL character")
    if "\\" in key:
        raise InvalidKeyError(key, "a key must not contain a backslash; use '/' for subfolders")
    if not _CONTROL_CHARACTERS.isdisjoint(key):
        raise InvalidKeyError(key, "a key must not contain control characters")
    if key.startswith("/"):
        raise InvalidKeyError(key, "a key must be relative to the tracker base, not absolute")
    segments = key.split("/")
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        _check_segment(key, segment, is_folder=index < last)
    return key


def _check_segment(key: str, segment: str, *, is_folder: bool) -> None:
    if not segment:
        raise InvalidKeyError(key, "a key must not have empty parts ('//' or a trailing '/')")
    if segment in (".", ".."):
        raise InvalidKeyError(
            key, f"a key must not have {segment!r} parts; keys cannot leave the tracker base"
        )
    if segment.startswith("."):
        raise InvalidKeyError(
            key, f"part {segment!r} starts with '.', which is reserved for temporary files"
        )
    size = len(segment.encode("utf-8"))
    if size > MAX_SEGMENT_BYTES:
        raise InvalidKeyError(
            key,
            f"each '/'-separated part is at most {MAX_SEGMENT_BYTES} bytes in UTF-8,"
            f" part {segment[:20]!r}... is {size}",
        )
    if is_folder and segment.endswith(DOCUMENT_SUFFIX):
        # Folder "x.json" would clash with the document of key "x".
        raise InvalidKeyError(
            key,
            f"folder part {segment!r} must not end in {DOCUMENT_SUFFIX!r},"
            " the suffix of result documents",
        )
