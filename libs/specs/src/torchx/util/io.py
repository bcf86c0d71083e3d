"""Reading a configuration file by path, or one that a package ships."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from torchx.util import entrypoints

# Where pytorch/torchx kept its builtin components, relative to the install root.
COMPONENTS_DIR = Path("torchx/components")
# The folder that holds this ``torchx`` namespace portion (``site-packages`` or ``src``).
_ROOT = Path(__file__).resolve().parent.parent.parent


def get_abspath(relpath: str) -> str:
    """``relpath`` under the folder this torchx is installed in (``torchx/...`` paths)."""
    return str(_ROOT / relpath)


def _installed_file(conf_file: str) -> str | None:
    path = get_abspath(conf_file)
    if os.path.isfile(path):
        return Path(path).read_text()
    return None


def read_conf_file(conf_file: str) -> str:
    """The text of ``conf_file``: the file itself when it exists, else what entry point
    ``torchx.file:get_file_contents`` returns for it, else the file of that path under the
    install root. FileNotFoundError naming the path when none has it."""
    if os.path.exists(conf_file):
        return Path(conf_file).read_text()
    reader: Callable[[str], str | None] = entrypoints.load(
        "torchx.file", "get_file_contents", default=_installed_file
    )
    text = reader(str(conf_file))
    if text is None:
        raise FileNotFoundError(
            f"{conf_file}: no such file, and no installed package provides it "
            "(`torchx builtins` lists the builtin components)"
        )
    return text


__all__ = ["COMPONENTS_DIR", "get_abspath", "read_conf_file"]
