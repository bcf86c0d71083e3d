"""``torchx wait`` and ``torchx log --exit-code`` as processes, on real local apps."""

from __future__ import annotations

import json
import subprocess
import sys

from .cli_process import start, torchx


def test_wait_exits_0_when_every_app_succeeded() -> None:
    first, second = start("sleep 0.2"), start("true")
    proc = torchx("wait", first, second)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.splitlines()) == sorted([f"{first} SUCCEEDED", f"{second} SUCCEEDED"])


def test_wait_exits_1_for_a_failed_app_and_says_why_in_one_line() -> None:
    ok, failed = start("true"), start("exit 3")
    proc = torchx("wait", ok, failed)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert f"{ok} SUCCEEDED" in lines
    assert f"{failed} FAILED: role 'sh' replica 0 exited with code 3" in lines
    assert len(lines) == 2


def test_wait_exits_1_for_a_cancelled_app() -> None:
    handle = start("sleep 60")
    assert torchx("cancel", handle).returncode == 0
    proc = torchx("wait", handle)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{handle} CANCELLED")


def test_wait_prints_each_app_as_it_ends() -> None:
    slow, fast = start("sleep 2"), start("true")
    proc = torchx("wait", slow, fast)
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [f"{fast} SUCCEEDED", f"{slow} SUCCEEDED"]


def test_wait_timeout_leaves_the_app_running_and_exits_124() -> None:
    handle = start("sleep 60")
    try:
        proc = torchx("wait", "--timeout", "1s", handle)
        assert proc.returncode == 124
        assert proc.stdout == f"{handle} RUNNING: still running after 1s (--timeout)\n"
        assert json.loads(torchx("status", "--json", handle).stdout)["state"] == "RUNNING"
    finally:
        torchx("cancel", handle)


def test_wait_json_is_one_object_per_line() -> None:
    ok, failed = start("true"), start("exit 2")
    proc = torchx("wait", "--json", ok, failed)
    assert proc.returncode == 1
    objects = {o["handle"]: o for o in map(json.loads, proc.stdout.splitlines())}
    assert objects[ok]["state"] == "SUCCEEDED" and objects[ok]["timed_out"] is False
    assert objects[failed]["state"] == "FAILED"
    assert objects[failed]["roles"][0]["replicas"][0]["exit_code"] == 2


def test_wait_on_an_unknown_app_exits_2() -> None:
    proc = torchx("wait", "local_cwd://torchx/no-such-app")
    assert proc.returncode == 2
    assert proc.stdout == "local_cwd://torchx/no-such-app UNKNOWN: no such app on its scheduler\n"


def test_wait_bad_input_is_one_line() -> None:
    proc = torchx("wait", "--timeout", "soon", "local_cwd://torchx/x")
    assert proc.returncode == 2
    assert proc.stderr == (
        "torchx: error: --timeout: got 'soon'; expected a duration such as 90, 30s, 10m, 2h or 7d\n"
    )
    proc = torchx("wait", "not-a-handle")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


def test_log_tail_keeps_exit_0_and_exit_code_flag_gives_the_result() -> None:
    handle = start("echo before; exit 4")
    assert torchx("wait", handle).returncode == 1
    plain = torchx("log", "-t", handle)
    assert plain.returncode == 0  # as in torchx 0.7
    assert plain.stdout == "sh/0 before\n"
    flagged = torchx("log", "-f", "--exit-code", handle)
    assert flagged.returncode == 1
    assert flagged.stdout == "sh/0 before\n"
    assert flagged.stderr == f"{handle} FAILED\n"
    ok = start("echo fine")
    assert torchx("log", "--follow", "--exit-code", ok).returncode == 0


def test_runner_wait_each_and_wait_all() -> None:
    code = """
import sys
from torchx.runner import get_runner
from torchx.specs import AppState
with get_runner() as runner:
    ok = runner.run_component("utils.sh", ["true"])
    bad = runner.run_component("utils.sh", ["sleep 0.5; exit 1"])
    print(runner.wait_all([ok], wait_interval=0.1))
    print([(h == bad, s.state.name) for h, s in runner.wait_each([bad, ok], wait_interval=0.1)])
    print(runner.wait_all([ok, bad], wait_interval=0.1))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "True",
        "[(False, 'SUCCEEDED'), (True, 'FAILED')]",
        "False",
    ]
