"""Warnings about what a command would otherwise do silently."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchx.specs import AppDef, AppStatus


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
# Schedulers whose replicas run on this machine, in a directory of its own file system.
_RUN_HERE = frozenset({"local_cwd", "local_dir"})


def refuse_missing_script(component: str, script: object, request: object, scheduler: str) -> None:
    """On local_cwd and local_dir, a builtin's ``--script`` that is not there where the
    replicas run would fail only once python or torchrun started, under pages of their
    output: refuse it first, in one line. ``request`` is the dryrun's request, so the
    directory looked in is each replica's own, exactly as the scheduler will start it
    (after ``-cfg cwd``, ``.torchxconfig``, a workspace copy or local_dir's image directory
    are applied). Other schedulers run it from a container image or a cluster's file
    system, which this check cannot see."""
    if scheduler not in _RUN_HERE or component not in _SCRIPT_AS_GIVEN:
        return
    if not isinstance(script, str) or not script or "$" in script:  # a macro: set at launch
        return
    import os

    from torchx.schedulers.local_scheduler import LocalRequest

    if not isinstance(request, LocalRequest):  # a plug-in registered under one of those names
        return
    from torchx.cli._errors import CliError

    path = os.path.expanduser(script)
    for replica in request.replicas:
        # before submit, a workspace copy is the workspace itself
        where = request.before_copy(replica.cwd)
        runs = "where" if where == replica.cwd else "a copy of which is where"
        # python and torchrun also run a directory with __main__.py, or a zip
        if not os.path.exists(os.path.join(where, path)):
            raise CliError(
                f"{component} --script: got {script!r}; nothing at that path in "
                f"{where}, {runs} {scheduler} runs role {replica.role!r}; give the path "
                "of your script, relative to that directory or absolute"
            )


# The exit codes of a Python whose program raised (a missing module, say), and of a shell
# that found no such command.
_PYTHON_FAILED = frozenset({1, 127})


def note_other_python(request: object, status: AppStatus) -> None:
    """After a local app failed: for each failed replica that ran a bare ``python``
    (``python3``...) from its PATH, when that is another environment than the one torchx
    runs in, one line naming both. ``dist.ddp``'s ``torchrun`` may come from torchx's own
    environment while ``utils.python``'s ``python`` comes from PATH, so a script that ran
    under one fails under the other with a missing module, and nothing else says which
    interpreter ran it. The path is looked up as the replica's start did (its PATH)."""
    import os
    import re
    import shutil

    from torchx.schedulers.local_scheduler import LocalRequest

    if not isinstance(request, LocalRequest):
        return
    ours = os.path.realpath(os.path.dirname(sys.executable))
    failed = {
        (r.role, r.id)
        for role in status.roles
        for r in role.replicas
        if r.exit_code in _PYTHON_FAILED
    }
    noted: set[str] = set()
    for replica in request.replicas:
        program = replica.argv[0] if replica.argv else ""
        if (replica.role, replica.id) not in failed or not re.fullmatch(r"python[\d.]*", program):
            continue
        used = shutil.which(program, path=replica.env.get("PATH", os.environ.get("PATH")))
        if used is None or os.path.realpath(os.path.dirname(used)) == ours or used in noted:
            continue
        noted.add(used)
        print(
            f"torchx: note: role {replica.role!r} ran {program} from its PATH, {used}, not "
            f"the Python torchx runs in ({sys.executable}), so what is installed only with "
            f"torchx is missing to it; activate torchx's environment, or put "
            f"{os.path.dirname(sys.executable)} first on PATH",
            file=sys.stderr,
        )
