"""local_docker against ``docker run`` and against pytorch/torchx 0.7, on one private engine.

Starts a private dockerd and an image registry on 127.0.0.1 (as the tests do), pushes a
busybox image to that registry (so pytorch/torchx 0.7, which pulls before every run, pulls
from this machine only), then takes turns, N times each, all on the ``torchx`` bridge
network:

- baseline: ``docker run --rm --network torchx IMAGE echo hello`` (the docker CLI);
- torchx API: ``DockerScheduler.submit`` + ``wait`` in this process;
- torchx CLI: ``torchx run -s local_docker utils.echo --image IMAGE --msg hello`` as a new
  process (it waits and streams the log by default);
- torchx 0.7 CLI: the same command line, run by pytorch/torchx 0.7.0 installed into a
  throwaway virtual environment in a temporary folder (``uv venv`` + ``uv pip install
  torchx==0.7.0``; the Docker SDK is one of 0.7's own requirements, it has no docker extra).

Both CLIs run in the same empty folder. 0.7 builds its default workspace, the current
folder, into an image on each run (this project builds one only when asked), so 0.7 is
also timed with ``--workspace ""``, the stricter comparison.
The figures to read: in-process / docker run (target at most 1.2) and torchx CLI / torchx
0.7 CLI (target at most 1.0). Run with bytecode caching on, as for an installed package:
env -u PYTHONDONTWRITEBYTECODE uv run python benchmarks/docker_run.py [N]
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fixture_modules import fixture_module

from torchx.schedulers.docker_scheduler import DockerScheduler
from torchx.specs import AppDef, AppState, Role

UPSTREAM = "torchx==0.7.0"


@contextlib.contextmanager
def _upstream_torchx(folder: Path) -> Iterator[str | None]:
    """The ``torchx`` program of pytorch/torchx 0.7.0 in a venv under ``folder``, or None."""
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    venv = folder / "torchx-0.7-venv"
    made = subprocess.run(
        [uv, "venv", "-q", "-p", sys.executable, str(venv)], capture_output=True, text=True
    )
    if made.returncode == 0:
        env = {**os.environ, "VIRTUAL_ENV": str(venv)}
        made = subprocess.run(
            [uv, "pip", "install", "-q", UPSTREAM], capture_output=True, text=True, env=env
        )
    if made.returncode != 0:
        print(f"torchx 0.7 not installed, its figure is left out: {made.stderr.strip()}")
        yield None
    else:
        yield str(venv / "bin" / "torchx")


def _median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def main(n: int) -> None:
    engines = fixture_module("docker")
    registries = fixture_module("registry")
    try:
        engine_cm = engines.running_engine()
        engine = engine_cm.__enter__()
    except engines.EngineUnavailable as e:
        print(f"skipped: {e}")
        return
    work = Path(tempfile.mkdtemp(prefix="torchx-bench-docker-"))
    try:
        with registries.running_registry() as registry, _upstream_torchx(work) as upstream:
            _run(n, engine, registry, upstream, work)
    finally:
        engine_cm.__exit__(None, None, None)
        shutil.rmtree(work, ignore_errors=True)


def _run(n: int, engine: Any, registry: Any, upstream: str | None, work: Path) -> None:
    config = work / "docker-config"
    config.mkdir()
    registry.write_login(config)
    env = {**os.environ, "DOCKER_HOST": engine.base_url, "DOCKER_CONFIG": str(config)}
    os.environ.update(env)  # the in-process scheduler finds the same engine and login
    image = f"{registry.host}/torchx/busybox:1"
    # The network every side joins; the docker CLI does not create it on its own.
    for step in (["tag", engine.image, image], ["push", image], ["network", "create", "torchx"]):
        subprocess.run(["docker", *step], check=True, capture_output=True, env=env)
    cwd = work / "empty"
    cwd.mkdir()

    baseline = ["docker", "run", "--rm", "--network", "torchx", image, "echo", "hello"]
    command = ["run", "-s", "local_docker", "utils.echo", "--image", image, "--msg", "hello"]
    ours = [str(Path(sys.executable).with_name("torchx")), *command]
    theirs = None if upstream is None else [upstream, *command]
    sched = DockerScheduler("bench")
    app = AppDef("echo", roles=[Role("echo", image=image, entrypoint="echo", args=["hello"])])

    def in_process() -> None:
        desc = sched.wait(sched.submit(app, {}))
        assert desc is not None and desc.state == AppState.SUCCEEDED, desc

    def cli(argv: list[str]) -> None:
        out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
        assert out.returncode == 0 and "hello" in out.stdout + out.stderr, out.stderr

    sides: dict[str, Any] = {
        "docker run --rm": lambda: subprocess.run(baseline, check=True, capture_output=True),
        "torchx DockerScheduler submit+wait, in-process": in_process,
        "torchx run -s local_docker, new process": lambda: cli(ours),
    }
    if theirs is not None:
        sides["pytorch/torchx 0.7 torchx run -s local_docker, new process"] = lambda: cli(theirs)
        # 0.7 without its default workspace image build: the stricter comparison.
        bare = [theirs[0], "run", "--workspace", "", *theirs[2:]]
        sides["pytorch/torchx 0.7 torchx run --workspace '' -s local_docker"] = lambda: cli(bare)
    for side in sides.values():  # warm: the network, page caches, 0.7's first pull
        side()
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(n):
        for name, side in sides.items():
            t = time.perf_counter()
            side()
            times[name].append(time.perf_counter() - t)
    sched.close()

    ms = {name: _median_ms(t) for name, t in times.items()}
    for name, value in ms.items():
        print(f"{name} (median of {n}): {value:.0f} ms")
    names = list(ms)
    print(f"ratio in-process / docker run: {ms[names[1]] / ms[names[0]]:.2f} (target <= 1.2)")
    print(f"ratio torchx CLI / docker run: {ms[names[2]] / ms[names[0]]:.2f}")
    if theirs is not None:
        print(
            f"ratio torchx CLI / pytorch/torchx 0.7 CLI: {ms[names[2]] / ms[names[3]]:.2f} "
            "(target <= 1.0)"
        )
        print(
            "ratio torchx CLI / pytorch/torchx 0.7 CLI without its workspace build: "
            f"{ms[names[2]] / ms[names[4]]:.2f}"
        )
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
