"""Warnings about what a command would otherwise do silently."""

from __future__ import annotations

import sys
from collections.abc import Mapping
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


# Builtins whose --script is handed as is to python or torchrun in the replica's directory.
_SCRIPT_AS_GIVEN = frozenset({"dist.ddp", "dist.spmd", "utils.python"})


def refuse_missing_script(
    component: str, script: object, app: AppDef, scheduler: str, cfg: Mapping[str, object]
) -> None:
    """On local_cwd, a builtin's ``--script`` that is no file where the replicas run would
    fail only once python or torchrun started, under pages of their output: refuse it
    first, in one line. Other schedulers run it from an image or a cluster's file system,
    which this machine cannot see."""
    if scheduler != "local_cwd" or component not in _SCRIPT_AS_GIVEN:
        return
    if not isinstance(script, str) or not script or "$" in script:  # a macro: set at launch
        return
    import os

    from torchx.cli._errors import CliError

    for role in app.roles:
        # where local_cwd runs a replica: -cfg cwd, else the image if it is a directory
        given = cfg.get("cwd")
        workdir = given if isinstance(given, str) and given else None
        workdir = workdir or (role.image if os.path.isdir(role.image) else os.getcwd())
        if not os.path.isfile(os.path.join(workdir, os.path.expanduser(script))):
            raise CliError(
                f"{component} --script: got {script!r}; no such file in {workdir}, where "
                f"{scheduler} runs role {role.name!r}; give the path of your script, "
                "relative to that directory or absolute"
            )
