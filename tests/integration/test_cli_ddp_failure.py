"""``dist.ddp -j 1x2`` through the installed ``torchx`` command: a failed run is short to
read (each worker's traceback once, torchrun's summary, and no second copy of anything),
and a worker's ``requeue()`` runs the app again although torchrun rewrites its exit code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

BIN = Path(sys.executable).parent


def _torchx(tmp_path: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    return subprocess.run(
        [str(BIN / "torchx"), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=timeout,
        check=False,
    )


@pytest.mark.slow
def test_a_failed_two_process_ddp_run_prints_at_most_40_lines(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text('import os\n\nraise ValueError("boom on rank " + os.environ["RANK"])\n')
    proc = _torchx(tmp_path, "run", "dist.ddp", "-j", "1x2", "--script", str(script))
    assert proc.returncode == 1, proc.stderr
    output = proc.stdout + proc.stderr
    assert len(output.splitlines()) <= 40, output
    for rank in (0, 1):
        assert output.count(f"ValueError: boom on rank {rank}") == 1, output
    assert output.count("ChildFailedError") == 1  # the one line that says it was left out
    assert "Root Cause (first observed failure)" in output
    # the full log keeps torchrun's own traceback
    log = _torchx(tmp_path, "log", proc.stdout.strip(), timeout=60)
    assert "raise ChildFailedError(" in log.stdout


REQUEUE_APP = """
import os, time
import torchx.runtime.preemption as p
print("rank", os.environ["RANK"], "attempt", p.attempt(), flush=True)
time.sleep(1)
if p.attempt() == 0:
    p.requeue()  # torchrun turns the workers' 75 into its own exit code 1
print("done", os.environ["RANK"], flush=True)
"""


@pytest.mark.slow
def test_requeue_asked_under_torchrun_runs_the_app_again(tmp_path: Path) -> None:
    script = tmp_path / "ddp75.py"
    script.write_text(REQUEUE_APP)
    proc = _torchx(
        tmp_path, "run", "-s", "local_cwd", "dist.ddp", "-j", "1x2", "--script", str(script)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    status = _torchx(tmp_path, "status", proc.stdout.strip().splitlines()[-1], timeout=60).stdout
    assert "State: SUCCEEDED" in status and "Num Preemptions: 1" in status, status
