"""The ``torchx`` command run as a process, for tests that drive real local apps through it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TORCHX = str(Path(sys.executable).with_name("torchx"))


def torchx(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``torchx ARGS`` in ``cwd``, with ``env`` added to this process's environment."""
    return subprocess.run(
        [TORCHX, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, **env} if env else None,
        check=False,
    )


def start(script: str, *run_args: str) -> str:
    """Submit ``utils.sh SCRIPT`` without waiting (``run_args``: more of ``torchx run``'s
    options, such as ``-cfg``); its handle."""
    proc = torchx("run", "--no-wait", *run_args, "utils.sh", script)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()
