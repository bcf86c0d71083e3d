"""Warnings about what a command would otherwise do silently."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchx.specs import AppDef


def warn_missing_gpus(app: AppDef, scheduler: str) -> None:
    """Warn (stderr) when the app asks for more GPUs per replica than this machine has:
    a local app then runs on CPU without a word from torch."""
    wanted = max((max(r.resource.gpu, 0) for r in app.roles), default=0)
    if not wanted:
        return
    from torchx.schedulers.local_scheduler import visible_gpus

    have = len(visible_gpus())
    if have >= wanted:
        return
    roles = ", ".join(f"{r.name} ({r.resource.gpu})" for r in app.roles if r.resource.gpu > have)
    print(
        f"torchx: warning: {scheduler}: the app asks for GPUs per replica ({roles}) but this "
        f"machine has {have} visible; its replicas will run without them",
        file=sys.stderr,
    )
