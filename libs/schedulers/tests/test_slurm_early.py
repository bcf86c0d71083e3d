"""``sbatch`` started before its script exists (``_slurm_early``), with a stand-in program:
the script arrives whole however large, and a missing program leaves the ordinary call to
say so. What real sbatch submits (nothing, when killed early) is tested on the test
cluster in tests/integration/test_sweep_slurm.py."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from torchx.schedulers._slurm_early import EarlySbatch, EarlySlot


def _stand_in(tmp_path: Path) -> list[str]:
    """A command that keeps what it reads on stdin, then prints a job id."""
    if sys.platform == "win32":
        pytest.skip("sbatch runs on Linux")
    prog = tmp_path / "fake-sbatch"
    prog.write_text(f'#!/bin/sh\ncat > {tmp_path}/got && echo "42;cluster"\n')
    prog.chmod(0o755)
    return [str(prog), "--parsable"]


def test_a_script_larger_than_a_pipe_arrives_whole(tmp_path: Path) -> None:
    cmd = _stand_in(tmp_path)
    script = "#!/bin/bash\n" + "".join(f"# line {i} {'x' * 80}\n" for i in range(4000))
    assert len(script) > 4 * 65536
    done = EarlySbatch(cmd).submit(script)
    assert done is not None and done.returncode == 0
    assert done.stdout.split(";")[0] == "42"
    assert (tmp_path / "got").read_text() == script


def test_the_slot_hands_the_early_process_only_to_the_same_command(tmp_path: Path) -> None:
    cmd = _stand_in(tmp_path)
    slot = EarlySlot()
    with slot.started(cmd):
        assert slot.take([*cmd, "--hold"]) is None
        early = slot.take(cmd)
        assert early is not None and slot.take(cmd) is None
        done = early.submit("#!/bin/bash\ntrue\n")
    assert done is not None and done.stdout.startswith("42")


def test_an_unused_early_process_is_killed_before_it_reads_a_script(tmp_path: Path) -> None:
    cmd = _stand_in(tmp_path)
    slot = EarlySlot()
    with pytest.raises(RuntimeError, match="planning failed"), slot.started(cmd):
        proc = slot._local.early.proc
        assert proc is not None and proc.poll() is None  # waiting for its script
        raise RuntimeError("planning failed")
    assert proc.returncode == -signal.SIGKILL  # killed, not ended by an end of script
    assert slot.take(cmd) is None


def test_no_program_leaves_the_ordinary_call_to_say_so(tmp_path: Path) -> None:
    early = EarlySbatch([str(tmp_path / "no-such-sbatch")])
    assert early.submit("#!/bin/bash\n") is None


def test_sbatch_starts_early_only_with_a_cpu_to_spare(monkeypatch: pytest.MonkeyPatch) -> None:
    from torchx.schedulers import _slurm_early

    monkeypatch.setattr(_slurm_early, "MIN_CPUS", 1)
    assert _slurm_early.worth_starting_early()
    monkeypatch.setattr(_slurm_early, "MIN_CPUS", 100_000)
    assert not _slurm_early.worth_starting_early()
