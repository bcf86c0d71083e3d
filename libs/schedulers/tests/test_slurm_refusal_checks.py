"""What torchx asks Slurm after sbatch refuses a job: the partition's size only when the
refusal may be about size, and once. Stand-ins for sbatch and scontrol on PATH note each
call; scontrol answers as a two-node partition would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchx.schedulers import SchedulerError
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, Role

PARTITION = "PartitionName=debug Default=YES TotalNodes=2 State=UP"


@pytest.fixture
def refusing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH whose sbatch refuses every job with the words in ``<dir>/refusal``."""
    for name, answer in (
        ("sbatch", 'cat "$(dirname "$0")/refusal" >&2\nexit 1'),
        ("scontrol", f"echo '{PARTITION}'"),
    ):
        tool = tmp_path / name
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> "$(dirname "$0")/calls"\n{answer}\n')
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def _refused(bin_dir: Path, refusal: str, replicas: dict[str, int]) -> tuple[str, list[str]]:
    """The error of submitting roles of ``replicas`` while sbatch says ``refusal``, and the
    scontrol calls made."""
    (bin_dir / "refusal").write_text(f"sbatch: error: Batch job submission failed: {refusal}\n")
    roles = [Role(n, image="", entrypoint="true", num_replicas=k) for n, k in replicas.items()]
    slurm = SlurmScheduler("t")
    with pytest.raises(SchedulerError) as err:
        slurm.schedule(slurm.submit_dryrun(AppDef("app", roles), {}))
    made = (bin_dir / "calls").read_text().splitlines()
    return str(err.value), [c for c in made if c.startswith("scontrol")]


def test_an_unreachable_controller_is_not_asked_again_for_the_partition(refusing: Path) -> None:
    # a second question to a controller that does not answer would wait its timeout again
    down = "Unable to contact slurm controller (connect failure)"
    text, asked = _refused(refusing, down, {"sh": 3})
    assert asked == []
    assert "Unable to contact slurm controller" in text and "scontrol ping" in text, text


def test_a_size_refusal_of_a_one_role_job_asks_the_partition_once(refusing: Path) -> None:
    text, asked = _refused(refusing, "Node count specification invalid", {"sh": 3})
    assert asked == ["scontrol show partition -o"]
    assert "role sh asks 3 nodes (one per replica) but partition debug has TotalNodes=2" in text


def test_a_refused_heterogeneous_job_asks_the_partition_once(refusing: Path) -> None:
    # it fits the partition (checked before sbatch), and sbatch refuses it for another reason
    text, asked = _refused(refusing, "More processors requested than permitted", {"a": 1, "b": 1})
    assert asked == ["scontrol show partition -o"]
    assert "More processors requested than permitted" in text and "resource.cpu" in text, text
