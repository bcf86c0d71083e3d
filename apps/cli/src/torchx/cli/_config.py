"""Where ``torchx configure`` writes: ``.torchxconfig`` in the current directory, or the
path ``TORCHXCONFIG`` names. The text comes from ``torchx.runner.config.dump``, the one
writer, in the form pytorch/torchx 0.7 writes (defaults filled in, required options as
``#FIXME`` placeholders); the runner reads both back as unset until edited.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

FILE_NAME = ".torchxconfig"


def config_path() -> Path:
    return Path(os.environ.get("TORCHXCONFIG") or FILE_NAME)


def render(schedulers: list[str], everything: bool) -> str:
    """The text of a config file for ``schedulers`` (every option with ``everything``,
    else the required ones)."""
    from torchx.runner.config import dump

    out = io.StringIO()
    dump(out, schedulers, required_only=not everything)
    return out.getvalue()
