"""examples/tracking: app1 then app2 as two components; app2 reads what app1 tracked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from torchx.runtime.tracking import FsspecResultTracker

ROOT = Path(__file__).resolve().parents[2]


def test_app2_reads_what_app1_left_in_the_tracker(tmp_path: Path) -> None:
    base = tmp_path / "tracker"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples/tracking/components.py"),
         "--tracker_base", str(base)],
        capture_output=True, text=True, cwd=tmp_path, check=False,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert FsspecResultTracker(str(base))["app1_out"] == {"accuracy": 0.233}
    assert "app2: app1 reached accuracy 0.233" in proc.stdout
    assert f"app1: stored accuracy 0.233 under app1_out in {base}" in proc.stdout
    # Sequence: app1 finished before app2 started.
    lines = proc.stdout.splitlines()
    first = next(i for i, s in enumerate(lines) if "/app1-" in s and s.endswith("SUCCEEDED"))
    second = next(i for i, s in enumerate(lines) if s.startswith("app2:"))
    assert first < second
