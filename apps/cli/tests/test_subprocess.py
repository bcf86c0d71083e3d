"""The installed ``torchx`` command as a real process, for every subcommand."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from torchx_test_fixtures_processes import alive

from .cli_process import TORCHX, torchx

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.skipif(shutil.which("uv") is None, reason="needs uv on PATH")
def test_readme_first_command_exactly_as_written() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    command = "uv run torchx run utils.echo --msg hello"
    assert command in readme
    proc = subprocess.run(
        command, shell=True, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    (handle,) = proc.stdout.splitlines()  # the handle alone on stdout, as pytorch/torchx
    assert handle.startswith("local_cwd://")
    assert "echo/0 hello\n" in proc.stderr
    assert proc.stderr.rstrip().endswith(f"{handle} SUCCEEDED")


def test_every_subcommand_as_a_process(isolated: Path) -> None:
    assert torchx("--version").stdout.startswith("torchx-")
    assert "Commands:" in torchx("--help").stdout
    bare = torchx()  # the help, and exit 1 as in pytorch/torchx 0.7: no command ran
    assert bare.returncode == 1 and "Commands:" in bare.stdout
    assert "utils.echo" in torchx("builtins").stdout
    assert "usage: utils.echo" in torchx("run", "utils.echo", "--help").stdout
    assert "=== SCHEDULER REQUEST ===" in torchx("run", "--dryrun", "utils.echo").stdout

    proc = torchx("run", "--json", "utils.echo", "--msg", "from a process")
    assert proc.returncode == 0, proc.stderr
    handle = json.loads(proc.stdout)["handle"]
    assert torchx("log", handle).stdout == "echo/0 from a process\n"
    assert "State: SUCCEEDED" in torchx("status", handle).stdout
    assert "role echo" in torchx("describe", handle).stdout
    assert handle in torchx("list", "-s", "local_cwd").stdout
    assert "log_dir" in torchx("runopts").stdout
    assert torchx("configure").returncode == 0 and (isolated / ".torchxconfig").is_file()

    proc = torchx("run", "--no-wait", "utils.sh", "sleep 60")
    long_running = proc.stdout.strip()
    assert torchx("cancel", long_running).returncode == 0
    assert torchx("status", "--json", long_running).returncode == 0


def test_failures_are_one_line_with_exit_code_2_and_failed_apps_exit_1() -> None:
    for args in (
        ["run", "utils.ecko"],
        ["status", "bad handle"],
        ["run", "-s", "nope", "utils.echo"],
        ["run", "--no-such-option", "utils.echo"],
        ["no-such-command"],
    ):
        proc = torchx(*args)
        assert proc.returncode == 2, args
        assert proc.stderr.startswith("torchx: error: ") and proc.stderr.count("\n") == 1, args
    proc = torchx("--debug", "run", "utils.ecko")
    assert proc.returncode == 1 and "Traceback" in proc.stderr
    proc = torchx("run", "utils.sh", "exit 4")
    assert proc.returncode == 1 and "exited with code 4" in proc.stderr


def test_python_dash_m_works_like_the_script() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "torchx.cli.main", "--version"],
        capture_output=True,
        text=True,
        env={**os.environ},
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("torchx-")


def test_closed_pipe_is_quiet() -> None:
    # `torchx builtins | head -1`: the reader is gone before torchx writes.
    proc = subprocess.Popen(
        [TORCHX, "builtins"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert "Broken pipe" not in err and "Traceback" not in err


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc (Linux)")
@pytest.mark.parametrize(
    ("log", "signame", "code"),
    [("--log", "SIGINT", 130), ("--no-log", "SIGINT", 130), ("--log", "SIGTERM", 143)],
)
def test_one_ctrl_c_or_sigterm_on_a_waiting_run_cancels_the_app(
    isolated: Path, log: str, signame: str, code: int
) -> None:
    import signal
    import time

    pid_file = isolated / "replica.pid"
    proc = subprocess.Popen(
        [TORCHX, "run", log, "utils.sh", f"echo $$ > {pid_file}; exec sleep 120"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    replica = None
    try:
        assert proc.stdout is not None
        # the handle alone on stdout, as in every mode: once it is out, the run waits
        handle = proc.stdout.readline().strip()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (pid_file.exists() and pid_file.read_text()):
            time.sleep(0.05)
        replica = int(pid_file.read_text())
        proc.send_signal(getattr(signal, signame))  # one press, or a polite kill
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == code, err
        assert handle and out == "", (handle, out)
        assert err.splitlines()[-1] == (
            f"torchx: interrupted; cancelled {handle} (use --no-wait to detach)"
        )
        assert not alive(replica)
        status = torchx("status", "--json", handle)
        assert json.loads(status.stdout)["state"] == "CANCELLED"
        again = torchx("cancel", handle)
        assert (
            again.stdout.strip() == f"{handle} was not running: it had already ended as CANCELLED"
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if replica is not None and alive(replica):
            os.kill(replica, signal.SIGKILL)


def test_a_misspelt_command_is_one_line_suggesting_the_name_once() -> None:
    out = torchx("runn")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("torchx: error: No such command 'runn'.")
    assert lines[0].count("'run'") == 1, lines[0]
