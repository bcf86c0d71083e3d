"""``torchx run -s local_docker`` as a real subprocess against the session's Docker engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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
        "--workspace",
        "",
        "-cfg",
        "network=host,shm_size=64m",
        "utils.echo",
        "--image",
        docker_engine.image,
        "--msg",
        "hi from the cli",
    )
    # The app's log goes to stdout; the handle and the final state to stderr.
    handle = _handle(run.stdout)
    assert run.stdout == handle + "\n"
    assert "echo/0 hi from the cli\n" in run.stderr
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
    # An image the engine lacks and cannot pull (a registry on a closed loopback port).
    missing = "127.0.0.1:1/missing:0.1"
    run = _torchx(
        docker_engine,
        *("run", "-s", "local_docker", "--workspace", "", "utils.echo", "--image", missing),
        check=False,
    )
    assert run.returncode != 0
    assert f"role 'echo' image: got '{missing}'" in run.stderr
    assert "--image" in run.stderr
    assert "Traceback" not in run.stderr
    listed = _torchx(docker_engine, "list", "-s", "local_docker", "--json").stdout
    assert missing not in listed


# Runs the CLI in-process, then reports which of the SDK's modules that imported.
_IMPORTS_AFTER_CLI = (
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


def _sdk_modules_after(engine: Any, argv: list[str], shows: str) -> str:
    env = {**os.environ, "DOCKER_HOST": engine.base_url}
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS_AFTER_CLI, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=engine.root,
    )
    assert shows in done.stdout, done.stderr  # it did the work
    return done.stderr.strip().splitlines()[-1]


def test_the_sdk_is_imported_only_when_an_engine_is_contacted(docker_engine: Any) -> None:
    """Every engine request goes through the Docker SDK, imported by the code that sends it:
    commands that contact no engine (help, run options, a dryrun) never import it."""
    echo = ["utils.echo", "--image", docker_engine.image, "--msg", "x"]
    # the image as it is: building a workspace image needs the SDK at dryrun too
    cfg = ["-cfg", "network=host,shm_size=64m", "--workspace", ""]
    light = (
        (["--help"], "run"),
        (["runopts", "local_docker"], "shm_size"),
        (["list"], ""),  # the default scheduler's apps: no engine involved
        (["run", "-s", "local_docker", "--dryrun", *cfg, *echo], "POST /containers/create"),
    )
    for argv, shows in light:
        assert _sdk_modules_after(docker_engine, argv, shows) == "[]", argv
    # No --wait: like `docker run`, a local_docker run waits and streams its log by default.
    run = ["run", "-s", "local_docker", *cfg, *echo]
    # (a waiting run prints the handle on stdout, the log on stderr)
    for argv, shows in ((run, "local_docker://"), (["list", "-s", "local_docker"], "SUCCEEDED")):
        imported = _sdk_modules_after(docker_engine, argv, shows)
        assert imported == "['docker', 'requests', 'urllib3']", argv


def test_no_engine_is_one_line_naming_docker_host(tmp_path: Path) -> None:
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/docker.sock"}
    done = subprocess.run(
        [
            *TORCHX,
            "run",
            "-s",
            "local_docker",
            "--workspace",
            "",
            "utils.echo",
            "--image",
            "busybox",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"torchx: error: local_docker: the Docker engine at unix://{tmp_path}")
    assert "(from DOCKER_HOST)" in line and "start dockerd" in line


def _one_error_line(engine: Any, env: dict[str, str], image: str) -> str:
    done = subprocess.run(
        [*TORCHX, "run", "-s", "local_docker", "--workspace", "", "utils.echo", "--image", image],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=engine.root,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("torchx: error: ") and "Traceback" not in line
    return line


def test_a_tls_engine_spoken_to_in_plain_http_is_one_line(docker_engine: Any) -> None:
    if docker_engine.tls_url is None:
        pytest.skip("the engine has no TLS listener (no openssl CLI to make certificates)")
    line = _one_error_line(docker_engine, {"DOCKER_HOST": docker_engine.tls_url}, "busybox")
    assert f"the Docker engine at {docker_engine.tls_url} (from DOCKER_HOST)" in line
    assert "DOCKER_TLS_VERIFY=1" in line


def test_a_pull_without_credentials_is_one_line_naming_docker_login(
    docker_engine: Any, docker_registry: Any, tmp_path: Path
) -> None:
    env = {"DOCKER_HOST": docker_engine.base_url, "DOCKER_CONFIG": str(tmp_path)}
    image = f"{docker_registry.host}/me/private:1"
    line = _one_error_line(docker_engine, env, image)
    assert f"role 'echo' image: got '{image}'" in line
    assert f"docker login {docker_registry.host}" in line


def test_the_current_directory_is_built_into_the_image_as_in_0_7(
    docker_engine: Any, docker_python_image: str, tmp_path: Path
) -> None:
    """pytorch/torchx 0.7's everyday flow: run from the project folder and the script is in
    the container, without --workspace; ``.torchxignore`` leaves files out, and so does
    ``.dockerignore`` (0.7's image workspaces read it). The project's own Dockerfile.torchx
    is the one built, with the build arguments IMAGE and WORKSPACE."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(
        "import os\nprint('train.py ran; secret.txt shipped:', os.path.exists('secret.txt'))\n"
        "print('data.bin shipped:', os.path.exists('data.bin'))\n"
        "print('built from', os.environ.get('BUILT_FROM'))\n"
    )
    (project / "Dockerfile.torchx").write_text(
        "ARG IMAGE\nFROM $IMAGE\nARG WORKSPACE\nENV BUILT_FROM=$WORKSPACE\nCOPY . .\n"
    )
    (project / "secret.txt").write_text("not for the image\n")
    (project / ".torchxignore").write_text("secret.txt\n")
    (project / "data.bin").write_text("listed in .dockerignore\n")
    (project / ".dockerignore").write_text("data.bin\n")
    env = {**os.environ, "DOCKER_HOST": docker_engine.base_url}
    sh = ["utils.sh", "--image", docker_python_image, "python3", "train.py"]
    cfg = ["-cfg", "network=host,shm_size=64m,quiet=True"]

    def torchx(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*TORCHX, "run", "-s", "local_docker", *cfg, *args, *sh],
            env=env, capture_output=True, text=True, timeout=120, cwd=project,
        )  # fmt: skip

    run = torchx()
    assert run.returncode == 0, run.stderr
    notice = run.stderr.splitlines()[0]
    assert notice == (
        f"torchx: building the current directory ({project}) into the image of role sh; "
        '--workspace "" to skip'
    )
    assert "sh/0 train.py ran; secret.txt shipped: False\n" in run.stderr
    assert "sh/0 data.bin shipped: False\n" in run.stderr
    assert f"sh/0 built from {project}\n" in run.stderr
    # --workspace "": the image as it is, nothing built and nothing said
    dry = torchx("--dryrun", "--workspace", "")
    assert dry.returncode == 0 and dry.stderr == "", dry.stderr
    assert f"image: {docker_python_image}" in dry.stdout and "torchx-workspace" not in dry.stdout
