"""Submit-to-finish of an echo app on local_docker vs ``docker run`` of the same container.

Starts a private dockerd (as the tests do), then takes turns, N times each:

- baseline: ``docker run --rm --network host IMAGE echo hello`` (the docker CLI);
- torchx CLI: ``torchx run -s local_docker --wait -cfg network=host utils.echo --image IMAGE
  --msg hello`` as a fresh process (interpreter start, imports, submit, wait, logs);
- torchx API: ``DockerScheduler.submit`` + ``wait`` in this process (the scheduler alone).

Prints the medians and the ratios to ``docker run`` (the target for the CLI is at most 1.2).
It also times ``python -c "import typer"``, the start-up every typer CLI pays before it does
anything: the in-process time plus that start-up is the least a typer CLI could take here.
Run with bytecode caching on, as for an installed package:
env -u PYTHONDONTWRITEBYTECODE uv run python benchmarks/docker_run.py [N]
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from torchx.schedulers.docker_scheduler import DockerScheduler
from torchx.specs import AppDef, AppState, Role

_FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "docker.py"


def _fixture_module() -> object:
    spec = importlib.util.spec_from_file_location("torchx_bench_docker_fixture", _FIXTURE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def main(n: int) -> None:
    fx = _fixture_module()
    try:
        engine_cm = fx.running_engine()  # type: ignore[attr-defined]
        engine = engine_cm.__enter__()
    except fx.EngineUnavailable as e:  # type: ignore[attr-defined]
        print(f"skipped: {e}")
        return
    try:
        sched = DockerScheduler("bench", base_url=engine.base_url)
        app = AppDef(
            "echo", roles=[Role("echo", image=engine.image, entrypoint="echo", args=["hello"])]
        )
        cfg = {"network": "host", "shm_size": "64m"}
        cli = [
            "docker",
            "-H",
            engine.base_url,
            "run",
            "--rm",
            "--network",
            "host",
            engine.image,
            "echo",
            "hello",
        ]
        torchx_cli = [
            str(Path(sys.executable).with_name("torchx")),
            "run",
            "-s",
            "local_docker",
            "--wait",
            "-cfg",
            "network=host,shm_size=64m",
            "utils.echo",
            "--image",
            engine.image,
            "--msg",
            "hello",
        ]
        env = {**os.environ, "DOCKER_HOST": engine.base_url}
        # Warm every path once (image layers, page cache of the interpreter and its modules).
        subprocess.run(cli, check=True, capture_output=True)
        subprocess.run(torchx_cli, check=True, capture_output=True, env=env)
        sched.wait(sched.submit(app, cfg))
        base: list[float] = []
        by_cli: list[float] = []
        by_api: list[float] = []
        for _ in range(n):
            t = time.perf_counter()
            subprocess.run(cli, check=True, capture_output=True)
            base.append(time.perf_counter() - t)
            t = time.perf_counter()
            out = subprocess.run(torchx_cli, check=True, capture_output=True, text=True, env=env)
            by_cli.append(time.perf_counter() - t)
            assert out.stdout == "echo/0 hello\n", out.stdout
            t = time.perf_counter()
            desc = sched.wait(sched.submit(app, cfg))
            by_api.append(time.perf_counter() - t)
            assert desc is not None and desc.state == AppState.SUCCEEDED
        typer_start: list[float] = []
        for _ in range(n):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import typer"], check=True)
            typer_start.append(time.perf_counter() - t)
        b = statistics.median(base)
        c = statistics.median(by_cli)
        a = statistics.median(by_api)
        print(f"docker run (median of {n}): {b * 1000:.0f} ms")
        print(f"torchx run -s local_docker CLI (median of {n}): {c * 1000:.0f} ms")
        print(f"DockerScheduler submit+wait in-process (median of {n}): {a * 1000:.0f} ms")
        ty = statistics.median(typer_start)
        print(f"python -c 'import typer' (median of {n}): {ty * 1000:.0f} ms")
        print(f"ratio torchx CLI / docker run: {c / b:.2f}")
        print(f"ratio in-process scheduler / docker run: {a / b:.2f}")
        print(f"least a typer CLI could take / docker run: {(a + ty) / b:.2f}")
        sched.close()
    finally:
        engine_cm.__exit__(None, None, None)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
