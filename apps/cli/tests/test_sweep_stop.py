"""A stop while ``torchx run --sweep ... --wait`` waits (Ctrl-C's SIGINT, or SIGTERM as a
service manager or ``kill`` sends it) cancels the sweep this command started, as it cancels
one app: nothing of it keeps running, and the exit code is the shell's for the signal."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from torchx_test_fixtures_processes import alive

from .cli_process import TORCHX, torchx

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")

TRIALS = 2
SWEEP = "max_retries=" + ",".join(map(str, range(TRIALS)))


def _processes_under(folder: Path) -> list[str]:
    """The live processes (but this one) whose command line or working directory names
    ``folder``: the sweep's group, its apps' supervisors and their replicas."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid() or not alive(int(entry)):
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if str(folder) in argv or cwd.startswith(str(folder)):
            found.append(f"{entry}: {argv}")
    return found


@pytest.mark.parametrize(("signame", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_stop_while_waiting_cancels_the_sweep(isolated: Path, signame: str, code: int) -> None:
    pids = [isolated / f"trial{i}.pid" for i in range(TRIALS)]
    script = f'echo $$ > "{isolated}/trial$TORCHX_SWEEP_INDEX.pid"; exec sleep 120'
    proc = subprocess.Popen(
        [TORCHX, "run", "--wait", "--workspace", "", "--sweep", SWEEP, "utils.sh", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    replicas: list[int] = []
    handle = ""
    try:
        assert proc.stdout is not None
        handle = proc.stdout.readline().strip()  # once out, the sweep is submitted
        deadline = time.monotonic() + 60
        while not all(p.exists() and p.read_text().strip() for p in pids):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the trials never started"
            time.sleep(0.05)
        replicas = [int(p.read_text()) for p in pids]
        proc.send_signal(getattr(signal, signame))
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == code, err
        assert err.splitlines()[-1] == (
            f"torchx: interrupted; cancelled {handle} (use --no-wait to detach)"
        ), err
        assert not [pid for pid in replicas if alive(pid)]
        deadline = time.monotonic() + 30  # the supervisors exit once their replicas have
        while (left := _processes_under(isolated)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == []
        status = torchx("status", handle)
        assert "CANCELLED" in status.stdout + status.stderr, status
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if handle:  # a failed test leaves no trial running (nor retried)
            torchx("cancel", handle)
