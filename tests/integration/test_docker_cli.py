"""``torchx run -s local_docker`` as a real subprocess against the session's Docker engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# The console script the torchx distribution installs beside the interpreter.
TORCHX = [str(Path(sys.executable).with_name("torchx"))]


def _torchx(engine: Any, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    # DOCKER_HOST is how torchx finds an engine, as the docker CLI does.
    env = {**os.environ, "DOCKER_HOST": engine.base_url}
    done = subprocess.run(
        [*TORCHX, *args], env=env, capture_output=True, text=True, timeout=120, cwd=engine.root
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _handle(stdout: str) -> str:
    return next(w for w in stdout.split() if w.startswith("local_docker://"))


def test_run_status_log_through_the_cli(docker_engine: Any) -> None:
    run = _torchx(
        docker_engine,
        "run",
        "-s",
        "local_docker",
        "--wait",
        "-cfg",
        "network=host,shm_size=64m",
        "utils.echo",
        "--image",
        docker_engine.image,
        "--msg",
        "hi from the cli",
    )
    # The app's log goes to stdout; the handle and the final state to stderr.
    handle = _handle(run.stderr)
    assert run.stdout == "echo/0 hi from the cli\n"
    assert f"{handle} SUCCEEDED" in run.stderr

    status = json.loads(_torchx(docker_engine, "status", "--json", handle).stdout)
    assert status["state"] == "SUCCEEDED"
    (role,) = status["roles"]
    assert role["role"] == "echo"
    assert [(r["id"], r["state"], r["exit_code"]) for r in role["replicas"]] == [
        (0, "SUCCEEDED", 0)
    ]

    log = _torchx(docker_engine, "log", f"{handle}/echo/0")
    assert log.stdout.splitlines() == ["echo/0 hi from the cli"]


def test_missing_image_is_refused_with_the_field(docker_engine: Any) -> None:
    # The builtins' default image is a placeholder the engine does not have.
    run = _torchx(docker_engine, "run", "-s", "local_docker", "utils.echo", check=False)
    assert run.returncode != 0
    assert "role 'echo' image: got 'torchx:0.1'" in run.stderr
    assert "--image" in run.stderr
    assert "Traceback" not in run.stderr
    listed = _torchx(docker_engine, "list", "-s", "local_docker", "--json").stdout
    assert "torchx:0.1" not in listed


def test_run_status_and_list_leave_the_sdk_unimported(docker_engine: Any) -> None:
    """The SDK's import costs more than a container start; only pulls/builds/pushes use it."""
    code = (
        "import sys\n"
        "from torchx.cli.main import run\n"
        "sys.argv = ['torchx', *sys.argv[1:]]\n"
        "try:\n"
        "    run()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('docker', 'requests', 'urllib3') if m in sys.modules),"
        " file=sys.stderr)\n"
    )
    env = {**os.environ, "DOCKER_HOST": docker_engine.base_url}
    # No --wait: like `docker run`, a local_docker run waits and streams its log by default.
    args = ["run", "-s", "local_docker", "-cfg", "network=host,shm_size=64m"]
    args += ["utils.echo"]
    args += ["--image", docker_engine.image, "--msg", "x"]
    for argv, shows in ((args, "echo/0 x\n"), (["list", "-s", "local_docker"], "SUCCEEDED")):
        done = subprocess.run(
            [sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True
        )
        assert shows in done.stdout, done.stderr  # it did the work
        assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr


def test_no_engine_is_one_line_naming_docker_host(tmp_path: Path) -> None:
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/docker.sock"}
    done = subprocess.run(
        [*TORCHX, "run", "-s", "local_docker", "utils.echo", "--image", "busybox"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    # a backend failure, said as one sentence: which engine, from where, and the fix
    assert line.startswith(
        "torchx: error: local_docker: cannot use the Docker engine at unix://"
    ), line
    assert "(from DOCKER_HOST)" in line and "Start dockerd" in line
