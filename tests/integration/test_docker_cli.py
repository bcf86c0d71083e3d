"""``torchx run -s local_docker`` as a real subprocess against the session's Docker engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("docker")

# The console script the torchx distribution installs beside the interpreter.
TORCHX = [str(Path(sys.executable).with_name("torchx"))]


def _torchx(engine: Any, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    # DOCKER_HOST is how the SDK (docker.from_env) finds an engine, as for the docker CLI.
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
