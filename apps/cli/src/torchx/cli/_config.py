"""What ``torchx configure`` writes: a ``.torchxconfig`` listing the schedulers' options.

::

    [cli:run]
    scheduler = local_cwd

    [local_cwd]
    ; directory that holds <app_id>/<role>/<replica>/stdout|stderr (str)
    ; log_dir =

The runner reads the file (``torchx.runner.load_config``); it goes to the current
directory, or to the path ``TORCHXCONFIG`` names.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchx.specs import runopts

FILE_NAME = ".torchxconfig"
DEFAULT_SCHEDULER = "local_cwd"


def config_path() -> Path:
    return Path(os.environ.get("TORCHXCONFIG") or FILE_NAME)


def render(schedulers: dict[str, runopts], everything: bool) -> str:
    """The text of a config file for ``schedulers``.

    Options with a default are written commented out (their default shown), so the file
    documents what can be set without changing behaviour; required ones are written blank.
    """
    lines = ["[cli:run]", f"scheduler = {DEFAULT_SCHEDULER}", ""]
    for name, opts in schedulers.items():
        lines.append(f"[{name}]")
        for opt_name, opt in opts:
            if not everything and not opt.is_required:
                continue
            lines.append(f"; {opt.help} ({opt.opt_type.__name__})")
            if opt.is_required:
                lines.append(f"{opt_name} =")
            else:
                value = "" if opt.default is None else _ini_value(opt.default)
                lines.append(f"; {opt_name} = {value}")
        lines.append("")
    return "\n".join(lines)


def _ini_value(value: object) -> str:
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    if isinstance(value, dict):
        return ";".join(f"{k}:{v}" for k, v in value.items())
    return str(value)
