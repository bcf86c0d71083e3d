"""The examples/pipelines demo compiles into the DAG its README draws."""

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_copy_then_train_example_compiles_to_a_dag(tmp_path: Path) -> None:
    out = tmp_path / "pipeline.yaml"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples/pipelines/copy_then_train.py"), "--output", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stdout

    spec = next(yaml.safe_load_all(out.read_text()))
    tasks = spec["root"]["dag"]["tasks"]
    assert set(tasks) == {"copy", "train", "evaluate"}
    assert "dependentTasks" not in tasks["copy"]
    assert tasks["train"]["dependentTasks"] == ["copy"]
    assert sorted(tasks["evaluate"]["dependentTasks"]) == ["copy", "train"]
    assert tasks["train"]["taskInfo"]["name"] == "train on gpu"
    assert tasks["train"]["retryPolicy"]["maxRetryCount"] == 2
    train = spec["deploymentSpec"]["executors"]["exec-train"]["container"]
    assert train["resources"]["accelerator"]["resourceType"] == "nvidia.com/gpu"
