"""The documentation's app1 -> app2 example, as two separate Python processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from torchx.runtime.tracking import FsspecResultTracker

if TYPE_CHECKING:
    from conftest import Backend

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "tracking"


def run_app(name: str, backend: Backend) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--tracker_base", backend.base],
        env=backend.child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_app2_reads_what_app1_wrote(shared_backend: Backend) -> None:
    app1 = run_app("app1.py", shared_backend)
    assert app1.returncode == 0, app1.stderr
    assert shared_backend.tracker()["app1_out"] == {"accuracy": 0.233}

    app2 = run_app("app2.py", shared_backend)
    assert app2.returncode == 0, app2.stderr
    assert app2.stdout == "app1 reached accuracy 0.233\n"


def test_app2_before_app1_says_which_result_is_missing(tmp_path: Path) -> None:
    base = str(tmp_path / "pipeline")
    FsspecResultTracker(base)["other"] = {"x": 1}
    app2 = subprocess.run(
        [sys.executable, str(EXAMPLES / "app2.py"), "--tracker_base", base],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert app2.returncode == 1
    last_line = app2.stderr.strip().splitlines()[-1]
    expected = f"no results for key 'app1_out' in tracker base {base!r}"
    assert last_line == f"torchx.runtime.tracking.ResultNotFoundError: {expected}"
