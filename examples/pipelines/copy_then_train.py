"""A three-stage Kubeflow pipeline made of torchx apps: fetch data, train, evaluate.

Each stage is an AppDef; the artifacts one stage writes (``output_path``) are what the
next one reads (``input_path``), so kfp sees a DAG: copy -> train -> evaluate, with
evaluate also reading the copied data.

    uv run python examples/pipelines/copy_then_train.py --output copy_then_train.yaml

The YAML it writes is what you upload to Kubeflow Pipelines (UI, or ``kfp.Client``).
"""

# No `from __future__ import annotations` here: kfp reads the pipeline's annotations as types.
import argparse
from pathlib import Path

import yaml
from kfp import compiler, dsl

import torchx.specs as specs
from torchx.pipelines.kfp import input_path, output_path, param, task_from_app

IMAGE = "ghcr.io/pytorch/torchx:latest"


# Stand-ins for the builtin components ``utils.copy`` and ``utils.python`` with the same
# signatures; with torchx-components installed, import those instead and nothing below
# them changes.
def copy(src: str, dst: str, image: str = IMAGE) -> specs.AppDef:
    """Copies ``src`` to ``dst`` (any fsspec URL)."""
    return specs.AppDef(
        name="copy",
        roles=[
            specs.Role(
                name="copy",
                image=image,
                entrypoint="python",
                args=["-m", "torchx.apps.utils.copy_main", "--src", src, "--dst", dst],
            )
        ],
    )


def python(
    *args: str,
    m: str,
    image: str = IMAGE,
    name: str = "python",
    h: str | None = None,
    max_retries: int = 0,
) -> specs.AppDef:
    """Runs ``python -m m args...``."""
    return specs.AppDef(
        name=name,
        roles=[
            specs.Role(
                name=name,
                image=image,
                entrypoint="python",
                args=["-m", m, *args],
                resource=specs.resource(h=h),
                max_retries=max_retries,
                env={"PYTHONUNBUFFERED": "1"},
            )
        ],
    )


# No return annotation: kfp would read one as the pipeline's outputs.
@dsl.pipeline(name="copy-then-train", description="fetch a data set, train on it, evaluate")
def copy_then_train(source: str = "s3://my-bucket/datasets/mnist"):
    fetch = task_from_app(copy(src=param("src"), dst=output_path("data")), inputs={"src": source})
    train = task_from_app(
        python(
            "--data",
            input_path("data"),
            "--model",
            output_path("model"),
            "--run-id",
            specs.macros.app_id,
            m="trainer.main",
            name="train",
            h="gpu.small",
            max_retries=2,
        ),
        inputs={"data": fetch.outputs["data"]},
        display_name="train on gpu",
    )
    task_from_app(
        python(
            "--model",
            input_path("model"),
            "--data",
            input_path("data"),
            "--report",
            output_path("report"),
            m="trainer.evaluate",
            name="evaluate",
            h="cpu.medium",
        ),
        inputs={"model": train.outputs["model"], "data": fetch.outputs["data"]},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("copy_then_train.yaml"))
    out = parser.parse_args().output
    compiler.Compiler().compile(copy_then_train, str(out))

    spec = next(yaml.safe_load_all(out.read_text()))
    print(f"wrote {out}")
    for name, task in spec["root"]["dag"]["tasks"].items():
        after = ", ".join(task.get("dependentTasks", [])) or "-"
        print(f"  {name:<10} after: {after}")


if __name__ == "__main__":
    main()
