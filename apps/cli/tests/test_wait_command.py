"""``torchx wait`` and ``torchx log --exit-code`` as processes, on real local apps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .cli_process import TORCHX, start, torchx


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


def test_wait_prints_each_app_as_it_ends(tmp_path: Path) -> None:
    # the slow app ends only once the fast one's line was printed, so the order is certain
    # however long each start takes, and the line must come while the slow app still runs
    gate = tmp_path / "gate"
    slow = start(f"while [ ! -e {gate} ]; do sleep 0.05; done")
    fast = start("true")
    with subprocess.Popen(
        [TORCHX, "wait", slow, fast], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        try:
            first = proc.stdout.readline()
        finally:
            gate.touch()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert [first.rstrip("\n"), *out.splitlines()] == [f"{fast} SUCCEEDED", f"{slow} SUCCEEDED"]


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


def test_runner_wait_each_and_wait_all(tmp_path: Path) -> None:
    code = """
import sys
from torchx.runner import get_runner
from torchx.specs import AppState
with get_runner() as runner:
    gate = sys.argv[1]
    ok = runner.run_component("utils.sh", ["true"])
    # bad ends only after wait_each gave ok, so the order of the two is certain
    bad = runner.run_component("utils.sh", [f"while [ ! -e {gate} ]; do sleep 0.05; done; exit 1"])
    print(runner.wait_all([ok], wait_interval=0.1))
    ended = []
    for h, s in runner.wait_each([bad, ok], wait_interval=0.1):
        ended.append((h == bad, s.state.name))
        open(gate, "w").close()
    print(ended)
    print(runner.wait_all([ok, bad], wait_interval=0.1))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "gate")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "True",
        "[(False, 'SUCCEEDED'), (True, 'FAILED')]",
        "False",
    ]


def test_a_one_line_report_leaves_out_what_announces_the_lines_it_cuts() -> None:
    from torchx.cli._errors import msg_line
    from torchx.cli._wait import _as_line
    from torchx.specs import AppState, AppStatus

    # Ray's message: the failed replica, then the last lines of its stderr below
    msg = "replica sh/0 exited with code 4; last lines of its stderr:\nerr1\nerr2"
    assert msg_line(msg) == "replica sh/0 exited with code 4"
    assert msg_line("the app failed:\nwhy") == "the app failed"
    assert msg_line("exited with code 3") == "exited with code 3"
    assert msg_line("") == ""
    status = AppStatus(AppState.FAILED, msg=msg)
    assert _as_line("ray://t/a", status, 1, None) == (
        "ray://t/a FAILED: replica sh/0 exited with code 4"
    )
