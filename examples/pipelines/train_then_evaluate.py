"""The train example's chain as a Kubeflow (kfp v2) pipeline: fetch data, train, evaluate.

Every stage is a builtin torchx component: ``utils.copy`` fetches the data set into an
artifact, and ``utils.python`` runs ``examples/train/trainer.py`` and then
``examples/train/evaluate.py`` on it. Artifacts written by one stage (``output_path``) are
read by the next (``input_path``), so kfp sees a DAG: copy -> train -> evaluate, with
evaluate also reading the copied data.

    uv run python examples/pipelines/train_then_evaluate.py [--output_dir build/pipelines]

The YAML it writes (``<output_dir>/train_then_evaluate.yaml``; ``build/`` is ignored by
git) is what you upload to Kubeflow Pipelines. ``--image`` names an image that has this
repository's examples at its working directory and torchx installed.
"""

# No `from __future__ import annotations` here: kfp reads the pipeline's annotations as types.
import argparse
from pathlib import Path

import yaml
from kfp import compiler, dsl

from torchx.components.utils import copy, python
from torchx.pipelines.kfp import input_path, output_path, param, task_from_app
from torchx.specs import AppDef, macros


def stages(image: str, data_source: str) -> None:
    """Adds the three tasks to the pipeline being defined (call inside @dsl.pipeline)."""
    fetch_app = copy(src=param("src"), dst=output_path("data"), image=image)
    fetch_app.name = "copy"  # the builtin's generic app name would be the task's name
    fetch = task_from_app(fetch_app, inputs={"src": data_source})

    train_app: AppDef = python(
        "--data", input_path("data"),
        "--checkpoint_dir", output_path("model"),
        "--steps", "200",
        "--tb_dir", f"/tmp/tb/{macros.app_id}",
        script="examples/train/trainer.py", name="train", image=image,
        h="gpu.small", max_retries=2,
    )  # fmt: skip
    train = task_from_app(
        train_app, inputs={"data": fetch.outputs["data"]}, display_name="train on gpu"
    )

    evaluate_app = python(
        "--checkpoint", input_path("model"),
        "--data", input_path("data"),
        "--report", output_path("report"),
        script="examples/train/evaluate.py", name="evaluate", image=image, h="cpu.medium",
    )  # fmt: skip
    task_from_app(
        evaluate_app, inputs={"model": train.outputs["model"], "data": fetch.outputs["data"]}
    )


def compile_pipeline(out: Path, image: str) -> None:
    # No return annotation: kfp would read one as the pipeline's outputs.
    @dsl.pipeline(name="train-then-evaluate", description="fetch data, train, evaluate")
    def train_then_evaluate(source: str = "s3://my-bucket/datasets/train-example.pt"):
        stages(image, source)

    compiler.Compiler().compile(train_then_evaluate, str(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--output_dir", type=Path, default=Path("build/pipelines"), help="folder for the YAML"
    )
    parser.add_argument("--output", type=Path, default=None, help="the YAML file (overrides)")
    parser.add_argument("--image", default="torchx-examples:latest", help="the stages' image")
    ns = parser.parse_args()
    output: Path = ns.output or ns.output_dir / "train_then_evaluate.yaml"
    output.parent.mkdir(parents=True, exist_ok=True)
    compile_pipeline(output, ns.image)

    spec = next(yaml.safe_load_all(output.read_text()))
    print(f"wrote {output}")
    for name, task in spec["root"]["dag"]["tasks"].items():
        after = ", ".join(task.get("dependentTasks", [])) or "-"
        print(f"  {name:<10} after: {after}")


if __name__ == "__main__":
    main()
