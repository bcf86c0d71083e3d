"""Cost of torchx.pipelines.kfp against plain kfp, measured in one run.

1. Define and compile a 50-stage chained pipeline whose stages are AppDefs turned into
   tasks by ``task_from_app``, and the same pipeline written directly with kfp
   (``@dsl.container_component`` and task setters); both produce the same YAML apart from
   names. Reports the median time of each and their ratio.
2. The import cost of ``torchx.pipelines.kfp`` (which must not import kfp), next to
   ``import kfp.dsl``, each in a fresh interpreter.

    uv run python benchmarks/pipelines_compile.py [--rounds 7] [--stages 50]
"""

# No `from __future__ import annotations`: kfp reads component annotations as live types.
import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kfp import compiler, dsl

import torchx.specs as specs
from torchx.pipelines.kfp import input_path, output_path, task_from_app

IMAGE = "registry.example.com/example/trainer:1.0"
ENV = {"PYTHONUNBUFFERED": "1"}


def _app(name: str, args: list[str], resource: specs.Resource) -> specs.AppDef:
    role = specs.Role(
        name=name,
        image=IMAGE,
        entrypoint="python",
        args=args,
        env=dict(ENV),
        resource=resource,
        max_retries=2,
    )
    return specs.AppDef(name=name, roles=[role])


def torchx_pipeline(stages: int) -> Any:
    @dsl.pipeline(name="chain")
    def chain():  # type: ignore[no-untyped-def]
        args = ["-m", "copy_main", "--src", "s3://in", "--dst", output_path("out")]
        prev = task_from_app(_app("copy", args, specs.resource(h="cpu.small")))
        for i in range(stages - 1):
            args = ["-m", "step", "--inp", input_path("inp"), "--out", output_path("out")]
            prev = task_from_app(
                _app(f"step{i}", args, specs.resource(h="gpu.small")),
                inputs={"inp": prev.outputs["out"]},
            )

    return chain


@dsl.container_component
def copy_op(out: dsl.Output[dsl.Artifact]):  # type: ignore[no-untyped-def]
    return dsl.ContainerSpec(
        image=IMAGE,
        command=["python"],
        args=["-m", "copy_main", "--src", "s3://in", "--dst", out.path],
    )


@dsl.container_component
def step_op(inp: dsl.Input[dsl.Artifact], out: dsl.Output[dsl.Artifact]):  # type: ignore[no-untyped-def]
    return dsl.ContainerSpec(
        image=IMAGE,
        command=["python"],
        args=["-m", "step", "--inp", inp.path, "--out", out.path],
    )


def _settings(task: Any, name: str, cpu: str, mem: str, gpus: int) -> Any:
    task.set_display_name(name)
    task.set_cpu_request(cpu).set_cpu_limit(cpu)
    task.set_memory_request(mem).set_memory_limit(mem)
    if gpus:
        task.set_accelerator_type("nvidia.com/gpu").set_accelerator_limit(gpus)
    for k, v in ENV.items():
        task.set_env_variable(k, v)
    return task.set_retry(num_retries=2)


def plain_kfp_pipeline(stages: int) -> Any:
    @dsl.pipeline(name="chain")
    def chain():  # type: ignore[no-untyped-def]
        prev = _settings(copy_op(), "copy", "1", "2048Mi", 0)
        for i in range(stages - 1):
            prev = _settings(step_op(inp=prev.outputs["out"]), f"step{i}", "8", "32768Mi", 1)

    return chain


def _time_compile(build: Callable[[int], Any], stages: int, out: Path) -> float:
    start = time.perf_counter()
    compiler.Compiler().compile(build(stages), str(out))
    return time.perf_counter() - start


def compile_benchmark(rounds: int, stages: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "p.yaml"
        for build in (torchx_pipeline, plain_kfp_pipeline):  # warm both paths once
            _time_compile(build, stages, out)
        times: dict[str, list[float]] = {"torchx": [], "kfp": []}
        for _ in range(rounds):  # interleaved, so load on the machine hits both alike
            times["torchx"].append(_time_compile(torchx_pipeline, stages, out))
            times["kfp"].append(_time_compile(plain_kfp_pipeline, stages, out))
    ours, base = statistics.median(times["torchx"]), statistics.median(times["kfp"])
    print(f"compile {stages}-stage pipeline, median of {rounds}:")
    print(f"  plain kfp:           {base * 1e3:8.1f} ms")
    print(f"  torchx.pipelines:    {ours * 1e3:8.1f} ms")
    print(f"  ratio torchx / kfp:  {ours / base:8.2f}x")


_IMPORT_TIMER = (
    "import time; t = time.perf_counter(); import {mod}; "
    "print(time.perf_counter() - t, 'kfp' in __import__('sys').modules)"
)


def _import_time(module: str) -> tuple[float, bool]:
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_TIMER.format(mod=module)],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, kfp_loaded = proc.stdout.split()
    return float(seconds), kfp_loaded == "True"


def import_benchmark(rounds: int) -> None:
    print(f"import cost in a fresh interpreter, median of {rounds}:")
    results = {}
    for module in ("torchx.specs", "torchx.pipelines.kfp", "kfp.dsl"):
        samples = [_import_time(module) for _ in range(rounds)]
        results[module] = statistics.median(s for s, _ in samples)
        loaded = any(k for _, k in samples)
        print(f"  import {module:<22} {results[module] * 1e3:8.1f} ms   kfp loaded: {loaded}")
    ratio = results["torchx.pipelines.kfp"] / results["kfp.dsl"]
    print(f"  ratio torchx.pipelines.kfp / kfp.dsl: {ratio:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--stages", type=int, default=50)
    opts = parser.parse_args()
    compile_benchmark(opts.rounds, opts.stages)
    import_benchmark(opts.rounds)


if __name__ == "__main__":
    main()
