"""The one-replica ray entrypoint run as a real process, without a cluster.

``_ray_direct`` needs nothing from Ray, so what it reports (exit codes, stderr tails,
restarts, a stop by SIGTERM) is checked here directly; tests/test_ray_scheduler.py runs the
same path through a real cluster.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers._ray_status import events, latest_state

DEADLINE_S = 120.0


def logs(stdout: str) -> list[dict[str, Any]]:
    """The driver's log events in its output."""
    return list(events(stdout.splitlines(), "log"))


def state(stdout: str) -> dict[str, Any]:
    """The driver's last state event in its output."""
    return latest_state(stdout.splitlines()).state


def config(script: str, max_retries: int = 0, env: dict[str, str] | None = None) -> str:
    replica = {"argv": ["bash", "-c", script], "env": env or {}}
    role = {"name": "w", "max_retries": max_retries, "replicas": [replica]}
    return json.dumps({"app_id": "a", "roles": [role]})


def run_direct(cfg: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torchx.schedulers._ray_direct", cfg],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=DEADLINE_S,
    )


def replica(state_event: dict[str, Any]) -> dict[str, Any]:
    (rep,) = state_event["replicas"]
    return dict(rep)


def test_success_reports_output_per_stream_and_the_rank_env() -> None:
    script = 'echo "$RANK $WORLD_SIZE $MASTER_ADDR $TORCHX_RANK0_HOST $X"; echo warn >&2'
    out = run_direct(config(script, env={"X": "mine"}), RAY_ADDRESS="127.0.0.1:6379")
    assert out.returncode == 0, out.stderr
    events_out, last = logs(out.stdout), state(out.stdout)
    assert [(e["r"], e["k"], e["s"], e["l"]) for e in events_out if e["s"] == "o"] == [
        ("w", 0, "o", "0 1 127.0.0.1 127.0.0.1 mine\n")
    ]
    assert [e["l"] for e in events_out if e["s"] == "e"] == ["warn\n"]
    assert last["state"] == "SUCCEEDED" and last["restarts"] == 0
    assert replica(last) == {
        "r": "w",
        "k": 0,
        "state": "SUCCEEDED",
        "exit": 0,
        "host": "127.0.0.1",
    }


def test_a_line_without_an_end_is_relayed_in_bounded_pieces() -> None:
    """300 kB with no newline, a two-byte character across the first piece's end: each
    event carries at most LINE_PIECE_BYTES, and together they are the output unchanged."""
    from torchx.schedulers._ray_direct import LINE_PIECE_BYTES

    before = LINE_PIECE_BYTES - 1  # the first piece ends inside the character
    script = (
        f"head -c {before} /dev/zero | tr '\\0' a; printf '\\303\\251'; "
        "head -c 300000 /dev/zero | tr '\\0' b"
    )
    out = run_direct(config(script))
    assert out.returncode == 0, out.stderr
    pieces = [e["l"] for e in logs(out.stdout) if e["s"] == "o"]
    assert "".join(pieces) == "a" * before + "\u00e9" + "b" * 300000
    assert len(pieces) > 1
    assert max(len(p.encode()) for p in pieces) <= LINE_PIECE_BYTES + 1


def test_failure_gives_the_exit_code_and_the_last_stderr_lines() -> None:
    script = "for i in $(seq 1 15); do echo line$i >&2; done; exit 5"
    out = run_direct(config(script))
    assert out.returncode == 5
    last = state(out.stdout)
    assert last["state"] == "FAILED"
    assert replica(last)["exit"] == 5
    expected_tail = "\n".join(f"line{i}" for i in range(6, 16))
    assert last["error"] == (
        f"replica w/0 exited with code 5; last lines of its stderr:\n{expected_tail}"
    )


def test_retries_restart_the_command_until_it_succeeds(tmp_path: Path) -> None:
    count = tmp_path / "count"
    script = (
        f'echo x >> {count}; [ "$(wc -l < {count})" -ge 3 ] || exit 9; '
        'echo "ok $TORCHX_RAY_RESTARTS"'
    )
    out = run_direct(config(script, max_retries=2))
    assert out.returncode == 0, out.stdout
    last = state(out.stdout)
    assert last["state"] == "SUCCEEDED" and last["restarts"] == 2
    assert [e["l"] for e in logs(out.stdout)] == ["ok 2\n"]


def test_out_of_retries_fails_with_the_last_exit_code() -> None:
    out = run_direct(config("exit $((TORCHX_RAY_RESTARTS + 3))", max_retries=1))
    assert out.returncode == 4
    last = state(out.stdout)
    assert (last["state"], last["restarts"]) == ("FAILED", 1)


@pytest.mark.parametrize("ignores_term", [False, True])
def test_sigterm_stops_the_command_and_its_children(tmp_path: Path, ignores_term: bool) -> None:
    pidfile = tmp_path / "pid"
    trap = "trap '' TERM; " if ignores_term else ""
    script = f"{trap}sleep 300 & echo $! > {pidfile}; wait"
    proc = subprocess.Popen(
        [sys.executable, "-m", "torchx.schedulers._ray_direct", config(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + DEADLINE_S
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline, "the command did not start"
        time.sleep(0.05)
    child = int(pidfile.read_text())
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 128 + signal.SIGTERM
    last = state(stdout)
    assert last["state"] == "CANCELLED"
    assert replica(last)["state"] == "CANCELLED"
    while not gone(child):
        assert time.monotonic() < deadline, f"process {child} outlived the stop"
        time.sleep(0.05)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2] == "Z"  # dead, waiting for a parent to reap it


def test_no_config_prints_usage() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "torchx.schedulers._ray_direct"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "TORCHX_RAY_DRIVER_CONFIG"},
    )
    assert out.returncode == 2 and "CONFIG_JSON" in out.stdout
