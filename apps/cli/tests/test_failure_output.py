"""A failure is read once: in the streamed log of ``torchx run``, in ``torchx status``, and
restarts are marked in the log (processes of the installed ``torchx`` command)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .cli_process import torchx

FAILING = 'def load():\n    raise ValueError("boom")\n\n\nload()\n'


def test_a_failing_run_shows_its_traceback_once(isolated: Path) -> None:
    (isolated / "train.py").write_text(FAILING)
    proc = torchx("run", "utils.python", "--script", "train.py")
    assert proc.returncode == 1
    assert proc.stderr.count("Traceback (most recent call last):") == 1
    assert proc.stderr.count("ValueError: boom") == 1
    handle = proc.stdout.strip()
    assert proc.stderr.splitlines()[-1] == (
        f"{handle} FAILED: role 'python' replica 0 exited with code 1"
    )


def test_status_shows_the_error_once_and_other_replicas_one_line_each(isolated: Path) -> None:
    (isolated / "train.py").write_text(FAILING)
    proc = torchx("run", "--no-log", "utils.python", "--num_replicas", "3", "--script", "train.py")
    assert proc.returncode == 1
    # without streamed logs, the end of the run shows the status: the error once
    assert proc.stderr.count("ValueError: boom") == 1
    status = torchx("status", proc.stdout.strip()).stdout
    assert status.count("ValueError: boom") == 1
    replica_lines = [ln for ln in status.splitlines() if "python[" in ln]
    assert len(replica_lines) == 3


def test_retries_mark_each_attempt_in_the_log_and_count_them_in_the_status() -> None:
    code = "import sys; print('working'); sys.exit(3)"
    proc = torchx("run", "--no-log", "utils.python", "--max_retries", "2", "--c", code)
    assert proc.returncode == 1
    handle = proc.stdout.strip()
    status = torchx("status", handle).stdout
    assert "Num Restarts: 2" in status
    assert re.search(r"\*python\[0\]:FAILED \(exitcode: 3\) attempt=3", status)
    assert (
        json.loads(torchx("status", "--json", handle).stdout)["roles"][0]["replicas"][0]["attempt"]
        == 3
    )
    role = "python/0"
    assert torchx("log", handle).stdout.splitlines() == [
        f"{role}#1 working",
        f"{role}#2 [torchx] attempt 2 of {role} starts: {role} exited with code 3",
        f"{role}#2 working",
        f"{role}#3 [torchx] attempt 3 of {role} starts: {role} exited with code 3",
        f"{role}#3 working",
    ]


def test_a_replica_started_once_has_no_attempt_in_its_prefix() -> None:
    proc = torchx("run", "utils.echo", "--msg", "once")
    assert "echo/0 once\n" in proc.stderr
    assert torchx("log", proc.stdout.strip()).stdout == "echo/0 once\n"


def test_the_combined_stream_keeps_a_partial_stderr_line_whole() -> None:
    # Each write waits until the one before reached the replica's combined log, so the
    # order the two pipes are read in is certain however loaded the machine.
    code = (
        "import glob, os, sys, time\n"
        "e = os.environ\n"
        "logs = f\"{e['XDG_STATE_HOME']}/torchx/local_cwd/logs/*/{e['TORCHX_APP_ID']}/*/0/\"\n"
        "def arrived(name, text):\n"
        "    deadline = time.monotonic() + 120\n"
        "    while time.monotonic() < deadline:\n"
        "        if any(text in open(f).read() for f in glob.glob(logs + name)): return\n"
        "        time.sleep(0.02)\n"
        "    raise SystemExit(f'{text!r} never reached {logs}{name}')\n"
        "sys.stderr.write('half of'); sys.stderr.flush(); arrived('stderr.log', 'half of')\n"
        "print('a stdout line', flush=True); arrived('combined.log', 'a stdout line')\n"
        "sys.stderr.write(' a line\\n'); sys.stderr.flush()\n"
        "sys.stderr.write('no newline at the end')\n"
    )
    proc = torchx("run", "--no-log", "utils.python", "--c", code)
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip()
    lines = torchx("log", handle).stdout.splitlines()
    prefix = "python/0 "
    assert lines == [
        f"{prefix}a stdout line",
        f"{prefix}half of a line",
        f"{prefix}no newline at the end",
    ]
    stderr_only = torchx("log", "--streams", "stderr", handle).stdout.splitlines()
    assert stderr_only == [f"{prefix}half of a line", f"{prefix}no newline at the end"]


def test_log_since_and_timestamps() -> None:
    proc = torchx("run", "--no-log", "utils.sh", "echo one; echo two")
    handle = proc.stdout.strip()
    stamped = torchx("log", "--timestamps", handle).stdout.splitlines()
    assert len(stamped) == 2
    for line, word in zip(stamped, ("one", "two"), strict=True):
        assert re.fullmatch(rf"sh/0 \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{{3}} {word}", line)
    assert torchx("log", "--since", "1h", handle).stdout == "sh/0 one\nsh/0 two\n"
    assert torchx("log", "--since", "2999-01-01T00:00", handle).stdout == ""
    bad = torchx("log", "--since", "yesterday", handle)
    assert bad.returncode == 2 and bad.stderr.startswith("torchx: error: --since: got 'yesterday'")


def test_log_follow_is_an_alias_of_tail() -> None:
    handle = torchx("run", "--no-wait", "utils.sh", "sleep 0.5; echo late").stdout.strip()
    for flag in ("-f", "--follow", "-t", "--tail"):
        proc = torchx("log", flag, handle)
        assert proc.returncode == 0 and proc.stdout == "sh/0 late\n", flag
    assert (
        "-f, --follow" in torchx("log", "--help").stdout
        or "--follow" in torchx("log", "--help").stdout
    )


def test_a_gpu_app_on_a_machine_without_gpus_gets_a_warning() -> None:
    proc = torchx(
        "run", "utils.python", "--gpu", "1", "--c", "pass", env={"CUDA_VISIBLE_DEVICES": ""}
    )
    assert proc.returncode == 0
    assert (
        "torchx: warning: local_cwd: the app asks for GPUs per replica (python "
        "(1)) but this machine has 0 visible; its replicas will run without them"
    ) in proc.stderr
    visible = torchx(
        "run", "utils.python", "--gpu", "1", "--c", "pass", env={"CUDA_VISIBLE_DEVICES": "0"}
    )
    assert "warning" not in visible.stderr
