"""``torchx requeue``, ``torchx status`` and ``torchx log --attempt`` as processes, on real
local apps that are requeued."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from torchx.tracker.backend.fsspec import create

from .cli_process import start, torchx

# Warned (SIGTERM), it "checkpoints" and asks for a requeue; the second run finishes.
APP = (
    "trap 'echo saved; exit 75' TERM; echo run $TORCHX_ATTEMPT; "
    "if [ $TORCHX_ATTEMPT = 1 ]; then exit 0; fi; while :; do sleep 0.05; done"
)


def requeue_once_started(handle: str) -> subprocess.CompletedProcess[str]:
    """``torchx requeue HANDLE`` once the app printed ``run 0``; it must succeed."""
    deadline = time.monotonic() + 60
    while "run 0" not in torchx("log", handle).stdout:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    proc = torchx("requeue", handle)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"requeued {handle} (preemption 1); now ")
    return proc


def test_requeue_then_status_and_each_attempt_s_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    monkeypatch.setenv("TORCHX_TRACKERS", "fsspec")
    monkeypatch.setenv("TORCHX_TRACKER_FSSPEC_CONFIG", str(runs))
    handle = start(APP)
    requeue_once_started(handle)
    assert torchx("wait", handle).returncode == 0
    status = torchx("status", handle).stdout
    assert "Num Restarts: 0" in status and "Num Preemptions: 1" in status, status
    assert "attempt=2" in status, status
    first = torchx("log", handle, "--attempt", "1").stdout.splitlines()
    texts = [line.split(" ", 1)[1] for line in first]
    # bash may also report its sleep, killed by the same SIGTERM, before or after the trap
    said = [t for t in texts if not t.endswith("Terminated")]
    assert said[:2] == ["run 0", "saved"] and "run 1" not in texts, texts
    assert all(line.startswith("sh/0#1 ") for line in first), first
    second = torchx("log", handle, "--attempt", "2").stdout.splitlines()
    assert second[0].startswith("sh/0#2 [torchx] attempt 2 of sh/0 starts: requeued")
    assert second[1:] == ["sh/0#2 run 1"]
    proc = torchx("log", handle, "--attempt", "3")
    assert (proc.returncode, proc.stdout) == (2, ""), proc
    assert f"--attempt: got 3; {handle} has had attempts 1 to 2" in proc.stderr, proc.stderr
    # the launcher recorded the attempt it started in the app's run
    recorded = create(str(runs)).metadata(handle)["attempt_2"]
    assert isinstance(recorded, dict), recorded
    assert (recorded["cause"], recorded["preemptions"]) == ("torchx requeue", 1), recorded
    assert "attempt_3" not in create(str(runs)).metadata(handle)


def test_requeue_and_attempt_refuse_bad_input_in_one_line() -> None:
    handle = start("true")
    assert torchx("wait", handle).returncode == 0
    proc = torchx("requeue", handle)
    assert proc.returncode != 0
    assert "has ended (SUCCEEDED); only a running app can be requeued" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    proc = torchx("log", handle, "--attempt", "0")
    assert proc.returncode != 0 and "--attempt: got 0" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    # past the last attempt: not an empty attempt, one line naming those there are
    proc = torchx("log", handle, "--attempt", "4")
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.strip().splitlines() == [
        f"torchx: error: --attempt: got 4; {handle} has had only attempt 1"
    ], proc.stderr


def test_requeue_says_when_the_app_was_killed_past_the_grace() -> None:
    # its "checkpoint" takes longer than the grace: killed, and the requeue says so
    handle = start(
        "trap 'echo saving; sleep 30' TERM; echo run $TORCHX_ATTEMPT; "
        "if [ $TORCHX_ATTEMPT = 1 ]; then exit 0; fi; while :; do sleep 0.05; done",
        "-cfg",
        "cancel_grace_seconds=0.5",
    )
    proc = requeue_once_started(handle)
    assert proc.stderr.startswith(
        "warning: sh/0 did not exit within cancel_grace_seconds (0.5s) of the requeue's "
        "SIGTERM and was killed; its checkpoint may be incomplete"
    ), proc.stderr
    assert torchx("wait", handle).returncode == 0
    first = torchx("log", handle, "--attempt", "1").stdout
    assert "sh/0#1 [torchx] sh/0 did not exit within cancel_grace_seconds" in first, first
