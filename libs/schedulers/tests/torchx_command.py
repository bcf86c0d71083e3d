"""The ``torchx`` command in a new process, for the tests that check what a user sees."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TORCHX = Path(sys.executable).with_name("torchx")


def torchx(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``torchx ARGS`` (its environment, KUBECONFIG included, is this process's)."""
    if not TORCHX.exists():
        pytest.skip("the torchx command is not installed in this environment")
    return subprocess.run(
        [str(TORCHX), *args], capture_output=True, text=True, timeout=120, check=False
    )
