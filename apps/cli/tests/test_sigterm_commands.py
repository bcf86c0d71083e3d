"""SIGTERM to a command that waits on a local app (``wait``, ``log -f``, ``status
--watch``) is a stop, as for ``torchx run``: one line, exit code 143 (128 + SIGTERM), not
an error about the CLI's own process with the usage-error code 2."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from .cli_process import TORCHX, start, torchx

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/status")


def _catches_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGTERM (its SigCgt mask in /proc)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


@pytest.fixture
def handle() -> Iterator[str]:
    h = start("sleep 60")
    yield h
    torchx("cancel", h)


@pytest.mark.parametrize("command", [["wait"], ["log", "-f"], ["status", "--watch"]])
def test_sigterm_while_waiting_exits_143_in_one_line(handle: str, command: list[str]) -> None:
    proc = subprocess.Popen(
        [TORCHX, *command, handle], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        # until the command has made its local scheduler, SIGTERM still has its default
        # action (the process dies without a word): signal it once the handler is there
        deadline = time.monotonic() + 60
        while not _catches_sigterm(proc.pid):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the command never handled SIGTERM"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert err.strip() == "torchx: interrupted", err
    # the app was only looked at: it keeps running
    assert "RUNNING" in torchx("status", handle).stdout
