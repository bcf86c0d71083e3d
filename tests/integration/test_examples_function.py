"""examples/function: shards summed by one app each, and a raise caught locally."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_shards_sum_to_the_whole_and_the_raise_comes_back(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples/function/shard_sum.py"),
         "--shards", "3", "--n", "100"],
        capture_output=True, text=True, cwd=tmp_path, check=False, timeout=300,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"sum of range(100) from 3 apps: {sum(range(100))}"
    assert lines[1].startswith("submitted local_cwd://torchx/function-")
    assert lines[2] == "the app raised ValueError: range() arg 3 must not be zero"
    # one app per shard plus the failing one, each call in the private transport folder
    # until its outcome came back: none is left
    functions = tmp_path / "state" / "torchx" / "functions"
    assert (functions / "calls").stat().st_mode & 0o077 == 0
    assert list((functions / "calls").iterdir()) == []
    assert list((functions / "handles").iterdir()) == []
