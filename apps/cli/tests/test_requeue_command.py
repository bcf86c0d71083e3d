"""``torchx requeue``, ``torchx status`` and ``torchx log --attempt`` as processes, on real
local apps that are requeued."""

from __future__ import annotations

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


def test_requeue_then_status_and_each_attempt_s_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    monkeypatch.setenv("TORCHX_TRACKERS", "fsspec")
    monkeypatch.setenv("TORCHX_TRACKER_FSSPEC_CONFIG", str(runs))
    handle = start(APP)
    deadline = time.monotonic() + 60
    while "run 0" not in torchx("log", handle).stdout:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    proc = torchx("requeue", handle)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"requeued {handle} (preemption 1); now ")
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
