"""examples/train: `torchx run` of its own ddp component; a killed run resumes from its checkpoint."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from torchx.cli._app import app

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "examples" / "train"
COMPONENT = f"{TRAIN / 'component.py'}:trainer"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _train_steps_logged(tb_dir: Path) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tb_dir))
    acc.Reload()
    return [e.step for e in acc.Scalars("loss/train")]


def _torchx(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.slow
def test_killed_training_resumes_from_its_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    data, ckpt, tb = tmp_path / "data.pt", tmp_path / "ckpt", tmp_path / "tb"
    subprocess.run(
        [sys.executable, str(TRAIN / "make_data.py"), "--out", str(data), "--rows", "1024"],
        check=True,
    )
    common = ["--checkpoint_dir", str(ckpt), "--tb_dir", str(tb), "--data", str(data)]
    common += ["--steps", "300", "--save_every", "20"]

    # First run: slowed down so that it is still training when we stop it.
    first = _torchx(
        "run", "--no-wait", COMPONENT, *common,
        "--step_delay", "0.1", "--rdzv_port", str(_free_port()),
    )  # fmt: skip
    handle = first.strip().splitlines()[-1]
    deadline = time.monotonic() + 120
    while not (ckpt / "latest").exists():
        assert time.monotonic() < deadline, "no checkpoint within 120 s"
        time.sleep(0.2)
    _torchx("cancel", handle)
    assert "CANCELLED" in _torchx("status", handle)

    saved = (ckpt / "latest").read_text().strip()
    resumed_at = int(saved.removeprefix("step_").removesuffix(".pt"))
    assert 0 < resumed_at < 300, saved
    assert not (ckpt / "step_000300.pt").exists()

    # Second run: the same command plus --resume, at full speed.
    out = _torchx(
        "run", COMPONENT, *common, "--resume", str(ckpt), "--rdzv_port", str(_free_port())
    )
    assert f"resumed from {ckpt}/{saved} at step {resumed_at}" in out
    done = json.loads(out.split("done ", 1)[1].splitlines()[0])
    assert done["step"] == 300 and done["world_size"] == 2
    assert done["accuracy"] > 0.9

    # Checkpoints continue where the killed run stopped, not from step 0.
    import torch

    final = torch.load(ckpt / "step_000300.pt", weights_only=True)
    assert final["step"] == 300 and final["optim"]["state"]
    assert (ckpt / "latest").read_text() == "step_000300.pt"
    # Every step was logged once: the killed run's events past the checkpoint were purged.
    steps = _train_steps_logged(tb)
    assert sorted(set(steps)) == list(range(1, 301))
