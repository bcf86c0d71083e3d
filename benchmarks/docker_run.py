"""Submit-to-finish of an echo app on local_docker vs ``docker run`` of the same container.

Starts a private dockerd (as the tests do), then alternates the two, N times each:

- baseline: ``docker run --rm --network host IMAGE echo hello`` (the docker CLI);
- torchx: ``DockerScheduler.submit`` + ``wait`` of the same image and command.

Prints the medians and the ratio torchx / docker run (the target is at most 1.2).
Run: uv run python benchmarks/docker_run.py [N]
"""

from __future__ import annotations

import importlib.util
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
        # Warm both paths once (image layers, client connection).
        subprocess.run(cli, check=True, capture_output=True)
        sched.wait(sched.submit(app, cfg))
        base, ours = [], []
        for _ in range(n):
            t = time.perf_counter()
            subprocess.run(cli, check=True, capture_output=True)
            base.append(time.perf_counter() - t)
            t = time.perf_counter()
            desc = sched.wait(sched.submit(app, cfg))
            ours.append(time.perf_counter() - t)
            assert desc is not None and desc.state == AppState.SUCCEEDED
        b, o = statistics.median(base), statistics.median(ours)
        print(f"docker run (median of {n}): {b * 1000:.0f} ms")
        print(f"torchx local_docker submit+wait (median of {n}): {o * 1000:.0f} ms")
        print(f"ratio torchx / docker run: {o / b:.2f}")
        sched.close()
    finally:
        engine_cm.__exit__(None, None, None)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
