"""Text cleanup for names that backends restrict."""

from __future__ import annotations

import re

_KEPT = re.compile(r"[a-z0-9-]")


def normalize_str(data: str) -> str:
    """``data`` lowercased, keeping only ``[a-z0-9-]`` and dropping one leading ``-``
    (``"-My_App.1"`` -> ``"myapp1"``)."""
    return "".join(_KEPT.findall(data.removeprefix("-").lower()))


__all__ = ["normalize_str"]
