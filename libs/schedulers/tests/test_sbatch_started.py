"""A command started before its input is made (``StartedSbatch``), with a real process in
sbatch's place: it reads nothing until ``submit``, and is ended unread by ``stop``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchx.schedulers._sbatch_started import StartedSbatch
from torchx.schedulers._slurm_commands import SlurmError

# Writes what it read on stdin, and the variable MARK, to the file it is given.
_READER = (
    "import os, sys; open(sys.argv[1], 'w').write(sys.stdin.read() + os.environ.get('MARK', '-'))"
)


def _argv(out: Path) -> list[str]:
    return [sys.executable, "-c", _READER, str(out)]


def test_the_started_process_gets_the_script_at_submit(tmp_path: Path) -> None:
    out = tmp_path / "out"
    started = StartedSbatch(_argv(out))
    assert not out.exists()
    proc = started.submit(_argv(out), "#!/bin/bash\n")
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == "#!/bin/bash\n-"
    started.stop()  # after a submit: nothing left to end


def test_stop_ends_it_having_read_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    started = StartedSbatch(_argv(out))
    started.stop()
    assert not out.exists()
    with pytest.raises(SlurmError, match="not found"):
        # stopped: a submit runs the command afresh (here one that does not exist)
        started.submit([str(tmp_path / "no-such-sbatch")], "x")


def test_another_command_line_or_environment_runs_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, other = tmp_path / "out", tmp_path / "other"
    started = StartedSbatch(_argv(out))
    assert started.submit(_argv(other), "a").returncode == 0
    assert other.read_text() == "a-" and not out.exists()

    started = StartedSbatch(_argv(out))
    # a component may set a variable while the script is made: the job must see it
    monkeypatch.setenv("MARK", "set-since")
    assert started.submit(_argv(out), "b").returncode == 0
    assert out.read_text() == "bset-since"


def test_a_command_that_cannot_start_is_said_at_submit(tmp_path: Path) -> None:
    missing = [str(tmp_path / "no-such-sbatch")]
    started = StartedSbatch(missing)  # nothing raised while the script is still being made
    with pytest.raises(SlurmError, match="not found: the slurm scheduler needs") as e:
        started.submit(missing, "x")
    assert missing[0] in str(e.value)
