"""A failed ``dist.ddp -j 1x2`` run is short to read: each worker's traceback once,
torchrun's summary, and no second copy of anything (the installed ``torchx`` command)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

BIN = Path(sys.executable).parent


@pytest.mark.slow
def test_a_failed_two_process_ddp_run_prints_at_most_40_lines(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text('import os\n\nraise ValueError("boom on rank " + os.environ["RANK"])\n')
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    proc = subprocess.run(
        [str(BIN / "torchx"), "run", "dist.ddp", "-j", "1x2", "--script", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    output = proc.stdout + proc.stderr
    assert len(output.splitlines()) <= 40, output
    for rank in (0, 1):
        assert output.count(f"ValueError: boom on rank {rank}") == 1, output
    assert output.count("ChildFailedError") == 1  # the one line that says it was left out
    assert "Root Cause (first observed failure)" in output
    # the full log keeps torchrun's own traceback
    log = subprocess.run(
        [str(BIN / "torchx"), "log", proc.stdout.strip()],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert "raise ChildFailedError(" in log.stdout
