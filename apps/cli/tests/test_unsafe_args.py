"""Command lines that used to run something other than what was written are refused, and
nothing is submitted."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from torchx.cli._app import app

cli = CliRunner()


@pytest.fixture
def sbatch_marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ``sbatch`` first on PATH that leaves a file behind when anything calls it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "sbatch-was-called"
    for tool in ("sbatch", "squeue", "sacct", "scontrol"):
        script = bin_dir / tool
        script.write_text(f"#!/bin/sh\ntouch {marker}\necho 'Submitted batch job 1'\n")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return marker


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # -j 2x4 after a flag ddp does not know used to reach train.py, leaving the job 1x2
        (
            ["--script", "train.py", "--steps", "10", "-j", "2x4"],
            "got '--steps'; no such argument",
        ),
        # a typo used to leave the job at the default memory, silently
        (["--script", "train.py", "--memmb", "4096"], "did you mean '--memMB'"),
        (["--scirpt", "train.py"], "did you mean '--script'"),
        # --dryrun after the component used to submit for real
        (
            ["-j", "2x2", "--script", "train.py", "--dryrun"],
            "--dryrun is an option of torchx run, not of dist.ddp: put it before the component",
        ),
        (["--script", "train.py", "-s", "local_cwd"], "-s is an option of torchx run"),
        (["--script", "train.py", "epochs", "--dryrun"], "among the program's arguments"),
    ],
)
def test_unsafe_command_lines_are_refused_and_nothing_is_submitted(
    argv: list[str], message: str, sbatch_marker: Path
) -> None:
    result = cli.invoke(app, ["run", "-s", "slurm", "dist.ddp", *argv])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("torchx: error: dist.ddp argument: got ")
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert not sbatch_marker.exists()


def test_the_same_on_local_cwd_leaves_no_app() -> None:
    result = cli.invoke(app, ["run", "utils.sh", "--num_replica", "2", "--dryrun", "true"])
    assert result.exit_code == 2 and "--dryrun is an option of torchx run" in result.stderr
    listed = cli.invoke(app, ["list", "--json"])
    assert listed.exit_code == 0 and listed.stdout.strip() == "[]"


def test_written_as_0_7_documents_it_the_flags_reach_the_program() -> None:
    result = cli.invoke(
        app,
        ["run", "--dryrun", "--json", "dist.ddp", "-j", "2x4", "--script", "train.py", "--",
         "--steps", "10"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "--nnodes 2 --nproc_per_node 4" in result.stdout
    assert "train.py --steps 10" in result.stdout


def test_dash_h_alone_is_the_help_of_dist_ddp() -> None:
    result = cli.invoke(app, ["run", "dist.ddp", "-h"])
    assert result.exit_code == 0 and result.stdout.startswith("usage: dist.ddp")
    assert "None" not in result.stderr
