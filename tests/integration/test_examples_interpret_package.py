"""examples/interpret and examples/package, from one checkpoint the train example writes."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from torchx_test_fixtures_scripts import load_script, torchx_in_process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small trained checkpoint folder, trained in this process by the train example."""
    trainer = load_script("example_trainer", "examples/train/trainer.py")
    ckpt = tmp_path_factory.mktemp("ckpt")
    trainer.main(["--steps", "150", "--save_every", "150", "--checkpoint_dir", str(ckpt)])
    assert (ckpt / "latest").read_text() == "step_000150.pt"
    return ckpt


@pytest.mark.slow
@pytest.mark.usefixtures("run_in_tmp_path")
def test_interpret_component_finds_the_features_the_label_depends_on(
    checkpoint: Path, tmp_path: Path
) -> None:
    pytest.importorskip("captum", reason="captum is in the examples dependency group")
    out = tmp_path / "attr"
    log = torchx_in_process(
        "run", f"{EXAMPLES / 'interpret/component.py'}:interpret",
        "--checkpoint", str(checkpoint), "--out", str(out),
    )  # fmt: skip
    assert "most important features" in log
    png = (out / "attributions.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    assert (out / "attributions.html").read_text().count("<tr>") == 1 + 8
    # The label is x0 + 2*x3 > 0: those two features must carry the most attribution.
    ranking = json.loads((out / "attributions.json").read_text())["ranking"]
    assert set(ranking[:2]) == {0, 3}


@pytest.mark.slow
def test_package_exports_reload_and_archive(checkpoint: Path, tmp_path: Path) -> None:
    import torch

    out = tmp_path / "model"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "package/export.py"),
         "--checkpoint", str(checkpoint), "--out", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FutureWarning" not in proc.stderr  # torch.jit's deprecation, left out on purpose

    x = torch.randn(5, 8)  # a batch size the export never saw: the batch dim is dynamic
    exported = torch.export.load(out / "model.pt2").module()
    scripted = torch.jit.load(str(out / "model.ts"))
    torch.testing.assert_close(exported(x), scripted(x))

    if importlib.util.find_spec("model_archiver") is None:
        pytest.skip("torch-model-archiver is not installed: no .mar to check")
    with zipfile.ZipFile(out / "classifier.mar") as mar:
        manifest = json.loads(mar.read("MAR-INF/MANIFEST.json"))
        assert {"model.ts", "handler.py"} <= set(mar.namelist())
    assert manifest["model"]["serializedFile"] == "model.ts"
    assert manifest["model"]["handler"] == "handler.py"


@pytest.mark.usefixtures("run_in_tmp_path")
def test_serve_torchserve_dryrun_prints_the_registration(tmp_path: Path) -> None:
    mar = str(tmp_path / "classifier.mar")
    api = "http://127.0.0.1:8081"
    # torchx's own dryrun: the request the scheduler would get, nothing started.
    plan = torchx_in_process("run", "--dryrun", "serve.torchserve", "--model_path", mar,
                             "--management_api", api)  # fmt: skip
    assert f"torchx.apps.serve.serve --model_path {mar} --management_api {api}" in plan
    # The component's dryrun: the app runs and prints the POST it would send to TorchServe.
    ran = torchx_in_process("run", "serve.torchserve", "--model_path", mar,
                            "--management_api", api, "--params", "initial_workers=1",
                            "--dryrun")  # fmt: skip
    assert f"POST {api}/models?url=" in ran and "initial_workers=1" in ran


@pytest.mark.parametrize("script", ["package/export.py", "interpret/interpret.py"])
def test_a_missing_checkpoint_is_one_line_naming_the_flag(script: str, tmp_path: Path) -> None:
    if script.startswith("interpret"):
        pytest.importorskip("captum", reason="captum is in the examples dependency group")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script),
         "--checkpoint", str(tmp_path / "nock"), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    nock = tmp_path / "nock"
    assert (
        proc.stderr
        == f"--checkpoint: no checkpoint at '{nock}'; give a checkpoint file or folder\n"
    )
    # a folder whose latest names a file never written: the same kind of line
    nock.mkdir()
    (nock / "latest").write_text("step_000005.pt")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--checkpoint", str(nock), "--out", str(tmp_path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1 and proc.stderr.startswith(f"--checkpoint: '{nock}' names"), (
        proc.stderr
    )
