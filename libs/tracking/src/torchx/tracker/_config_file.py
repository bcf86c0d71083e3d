"""Reading a tracker's own config file (the fsspec tracker's options file, the MLflow
tracker's ``.torchxconfig``): capped, so a wrong path (a data file, a device) costs one
line of error and never memory that grows with what sits there, and read as text the
way the runner reads ``.torchxconfig``."""

from __future__ import annotations

from typing import Any

from ._errors import TrackerConfigError

#: Largest config file a tracker reads, in bytes: such a file holds a few lines.
MAX_OPTIONS_FILE_BYTES = 1024 * 1024


def read_config_file(fs: Any, path: str, field: str, value: object, fix: str) -> str:
    """The text of the file at ``path`` on fsspec filesystem ``fs``: UTF-8, with or
    without an editor's byte-order mark. A file that cannot be read, is over
    :data:`MAX_OPTIONS_FILE_BYTES` or is not UTF-8 text is a one-line
    :class:`TrackerConfigError` (``field``, ``value``) naming ``path``, why, and ``fix``."""
    from torchx.runtime.tracking._errors import over_limit_text
    from torchx.runtime.tracking._stores import store_for

    store = store_for(fs)
    limit = MAX_OPTIONS_FILE_BYTES
    try:
        data = store.read(path, limit)  # at most limit + 1 bytes, whatever the file
    except OSError as e:
        raise TrackerConfigError(field, value, f"{path} cannot be read ({e}); {fix}") from None
    if len(data) > limit:
        raise TrackerConfigError(
            field,
            value,
            f"{path} holds {over_limit_text(store.size(path), limit)}; a tracker's config file"
            f" holds at most MAX_OPTIONS_FILE_BYTES ({limit}) bytes; {fix}",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TrackerConfigError(field, value, f"{path} is not UTF-8 text ({e}); {fix}") from None
