"""The examples/pipelines chain compiles into the DAG its README draws, and the same
builtin components run the same chain for real on the local scheduler."""

import json
import subprocess
import sys
from pathlib import Path

import yaml

from torchx.components.utils import copy, python
from torchx.runner import get_runner
from torchx.specs import AppState

ROOT = Path(__file__).resolve().parents[2]


def test_train_then_evaluate_compiles_to_a_dag(tmp_path: Path) -> None:
    out = tmp_path / "pipeline.yaml"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples/pipelines/train_then_evaluate.py"),
            "--output",
            str(out),
            "--image",
            "registry.local/examples:1",
        ],
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
    executors = spec["deploymentSpec"]["executors"]
    train = executors["exec-train"]["container"]
    assert train["image"] == "registry.local/examples:1"
    assert train["command"] == ["python"]
    assert train["args"][0] == "examples/train/trainer.py"
    assert train["resources"]["accelerator"]["resourceType"] == "nvidia.com/gpu"
    assert executors["exec-copy"]["container"]["args"][:2] == ["-m", "torchx.apps.utils.copy_main"]


def test_same_chain_runs_locally(tmp_path: Path) -> None:
    data_src, data = tmp_path / "source.pt", tmp_path / "data.pt"
    ckpt, report = tmp_path / "ckpt", tmp_path / "report.json"
    subprocess.run(
        [sys.executable, str(ROOT / "examples/train/make_data.py"), "--out", str(data_src)],
        check=True,
    )
    train_dir = str(ROOT / "examples/train")
    chain = [
        copy(src=str(data_src), dst=str(data)),
        python(
            "--data", str(data), "--checkpoint_dir", str(ckpt), "--steps", "30",
            script="trainer.py", name="train",
        ),
        python(
            "--checkpoint", str(ckpt), "--data", str(data), "--report", str(report),
            script="evaluate.py", name="evaluate",
        ),
    ]  # fmt: skip
    with get_runner() as runner:
        for app in chain:
            handle = runner.run(app, cfg={"log_dir": str(tmp_path / "logs"), "cwd": train_dir})
            status = runner.wait(handle, timeout=300)
            assert status is not None and status.state == AppState.SUCCEEDED, status
    result = json.loads(report.read_text())
    assert result["step"] == 30
    assert result["examples"] == 2048 // 5
    assert 0.0 <= result["accuracy"] <= 1.0
    assert result["checkpoint"].endswith("step_000030.pt")
