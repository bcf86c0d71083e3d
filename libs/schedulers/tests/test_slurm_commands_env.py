"""The environment Slurm's commands run with: the user's, except the time format of the
commands whose output torchx reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchx.schedulers._slurm_commands import run


def test_commands_read_here_print_standard_times_and_sbatch_keeps_the_users_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # stand-ins on PATH that print the time format they were given, and one other variable
    for name in ("sacct", "squeue", "scontrol", "sbatch"):
        tool = tmp_path / name
        tool.write_text('#!/bin/sh\necho "$SLURM_TIME_FORMAT $TORCHX_TEST_KEPT"\n')
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_TIME_FORMAT", "relative")  # as a user's profile may set it
    monkeypatch.setenv("TORCHX_TEST_KEPT", "kept")
    for name in ("sacct", "squeue", "scontrol"):
        assert run([name]).stdout == "standard kept\n", name
    # the job sbatch submits inherits its environment: the user's format stays
    assert run(["sbatch"]).stdout == "relative kept\n"


def test_a_command_past_the_time_limit_is_one_line_naming_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchx.schedulers import _slurm_commands

    # exec: the stand-in is the process the timeout kills, so no child keeps its pipes open
    tool = tmp_path / "scontrol"
    tool.write_text("#!/bin/sh\nexec sleep 60\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(_slurm_commands, "_TIMEOUT", 0.5)
    with pytest.raises(_slurm_commands.SlurmTimeoutError) as e:
        run(["scontrol", "requeue", "77", "extra"])
    text = str(e.value)
    assert "\n" not in text, text
    assert "`scontrol requeue 77` did not finish within 0.5 s" in text, text
    assert "scontrol ping" in text, text
