"""examples/train: `torchx run` of its own ddp component; a killed run resumes from a checkpoint."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import ModuleType

import pytest
from torchx_test_fixtures_ports import free_loopback_port
from torchx_test_fixtures_scripts import load_script, torchx_in_process

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "examples" / "train"
COMPONENT = f"{TRAIN / 'component.py'}:trainer"


def _trainer_module() -> ModuleType:
    return load_script("example_trainer", "examples/train/trainer.py")


def _train_steps_logged(tb_dir: Path) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tb_dir))
    acc.Reload()
    return [e.step for e in acc.Scalars("loss/train")]


@pytest.mark.slow
@pytest.mark.usefixtures("run_in_tmp_path")
def test_killed_training_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    data, ckpt, tb = tmp_path / "data.pt", tmp_path / "ckpt", tmp_path / "tb"
    trainer = _trainer_module()
    trainer.write_torch(str(data), trainer.make_dataset(1024))
    common = ["--checkpoint_dir", str(ckpt), "--tb_dir", str(tb), "--data", str(data)]
    common += ["--steps", "120", "--save_every", "20"]
    runs = tmp_path / "runs"
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={runs}\n"
    )

    # First run: slowed down so that it is still training when we stop it.
    first = torchx_in_process(
        "run", "--no-wait", COMPONENT, *common,
        "--step_delay", "0.1", "--rdzv_port", str(free_loopback_port()),
    )  # fmt: skip
    handle = first.strip().splitlines()[-1]
    deadline = time.monotonic() + 120
    while not (ckpt / "latest").exists():
        assert time.monotonic() < deadline, "no checkpoint within 120 s"
        time.sleep(0.2)
    torchx_in_process("cancel", handle)
    assert "CANCELLED" in torchx_in_process("status", handle)

    saved = (ckpt / "latest").read_text().strip()
    resumed_at = int(saved.removeprefix("step_").removesuffix(".pt"))
    assert 0 < resumed_at < 120, saved
    assert not (ckpt / "step_000120.pt").exists()

    # Second run: the same command plus --resume, at full speed.
    out = torchx_in_process(
        "run", "--parent_run_id", handle, COMPONENT, *common, "--resume", str(ckpt),
        "--rdzv_port", str(free_loopback_port()),
    )  # fmt: skip
    assert f"resumed from {ckpt}/{saved} at step {resumed_at}" in out
    done = json.loads(out.split("done ", 1)[1].splitlines()[0])
    assert done["step"] == 120 and done["world_size"] == 2
    assert done["accuracy"] > 0.9

    # Checkpoints continue where the killed run stopped, not from step 0.
    import torch

    final = torch.load(ckpt / "step_000120.pt", weights_only=True)
    assert final["step"] == 120 and final["optim"]["state"]
    assert (ckpt / "latest").read_text() == "step_000120.pt"
    # Every step was logged once: the killed run's events past the checkpoint were purged.
    steps = _train_steps_logged(tb)
    assert sorted(set(steps)) == list(range(1, 121))

    # The resumed run recorded itself through AppRun, as a descendant of the killed run.
    [resumed] = json.loads(
        torchx_in_process("tracker", "list", "jobs", "--parent-run-id", handle, "--json")
    )
    recorded = json.loads(
        torchx_in_process("tracker", "list", "metadata", resumed["job_id"], "--json")
    )
    assert recorded["metadata"]["step"] == 120 and recorded["metadata"]["world_size"] == 2
    assert recorded["metadata"]["accuracy"] == done["accuracy"]
    artifacts = json.loads(
        torchx_in_process("tracker", "list", "artifacts", resumed["job_id"], "--json")
    )
    assert {a["name"]: a["path"] for a in artifacts} == {
        "checkpoint": f"{ckpt}/step_000120.pt",
        "tensorboard": str(tb),
    }


def test_checkpoints_and_resume_work_on_memory_urls(capsys: pytest.CaptureFixture[str]) -> None:
    """The same trainer, one process, with checkpoints in fsspec's in-memory filesystem."""
    import fsspec

    trainer = _trainer_module()
    trainer.main(["--steps", "30", "--save_every", "10", "--checkpoint_dir", "memory://ex/ckpt"])
    fs = fsspec.filesystem("memory")
    assert fs.cat_file("/ex/ckpt/latest") == b"step_000030.pt"
    trainer.main(["--steps", "50", "--save_every", "10", "--checkpoint_dir", "memory://ex/ckpt",
                  "--resume", "memory://ex/ckpt/step_000020.pt"])  # fmt: skip
    out = capsys.readouterr().out
    assert "resumed from memory://ex/ckpt/step_000020.pt at step 20" in out
    assert "step 30: saved step_000030.pt" in out.split("resumed", 1)[1]
    assert fs.cat_file("/ex/ckpt/latest") == b"step_000050.pt"


def test_resume_from_a_missing_checkpoint_names_the_flag(tmp_path: Path) -> None:
    trainer = _trainer_module()
    with pytest.raises(SystemExit, match=r"--resume: no checkpoint at '.*nope.pt'"):
        trainer.main(["--steps", "5", "--resume", str(tmp_path / "nope.pt")])


def test_a_missing_data_set_or_dangling_latest_names_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trainer = _trainer_module()
    with pytest.raises(SystemExit, match=r"^--data: no data set at '.*nodata.pt'; write one"):
        trainer.main(["--steps", "5", "--data", str(tmp_path / "nodata.pt")])
    dangling = tmp_path / "ckpt"
    dangling.mkdir()
    (dangling / "latest").write_text("step_000005.pt")  # its checkpoint was never written
    with pytest.raises(SystemExit, match=r"^--resume: '.*ckpt' names 'step_000005.pt' in 'latest'"):
        trainer.main(["--steps", "5", "--resume", str(dangling)])
    monkeypatch.syspath_prepend(str(TRAIN))  # evaluate.py imports trainer from its folder
    evaluate = load_script("example_evaluate", "examples/train/evaluate.py")
    with pytest.raises(SystemExit, match=r"^--checkpoint: no checkpoint at '.*nope'"):
        evaluate.main(["--checkpoint", str(tmp_path / "nope"), "--report", str(tmp_path / "r")])
