"""When a local app's ``python`` (found on PATH) is another environment than torchx's and
the replica fails, one note names which interpreter ran: nothing else says so."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from .cli_process import torchx

OTHER = shutil.which("python3", path=os.defpath)


@pytest.fixture
def other_python_first(isolated: Path) -> dict[str, str]:
    """PATH whose ``python`` is a Python of another environment than this one."""
    if OTHER is None or Path(OTHER).parent.resolve() == Path(sys.executable).parent.resolve():
        pytest.skip("needs a python3 on the default PATH outside this environment")
    bin_dir = isolated / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(OTHER)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_a_failure_under_another_python_names_it(
    isolated: Path, other_python_first: dict[str, str]
) -> None:
    (isolated / "fails.py").write_text("import sys; sys.exit('no luck')\n")
    proc = torchx("run", "utils.python", "--script", "fails.py", env=other_python_first)
    assert proc.returncode == 1
    notes = [line for line in proc.stderr.splitlines() if line.startswith("torchx: note:")]
    assert notes == [
        f"torchx: note: role 'python' ran python from its PATH, {isolated / 'bin/python'}, "
        f"not the Python torchx runs in ({sys.executable}), so what is installed only with "
        f"torchx is missing to it; activate torchx's environment, or put "
        f"{os.path.dirname(sys.executable)} first on PATH"
    ]


def test_no_note_on_success_or_under_torchxs_own_python(
    isolated: Path, other_python_first: dict[str, str]
) -> None:
    (isolated / "fails.py").write_text("import sys; sys.exit('no luck')\n")
    (isolated / "works.py").write_text("print('fine')\n")
    proc = torchx("run", "utils.python", "--script", "works.py", env=other_python_first)
    assert proc.returncode == 0 and "torchx: note" not in proc.stderr, proc.stderr
    ours = {"PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    proc = torchx("run", "utils.python", "--script", "fails.py", env=ours)
    assert proc.returncode == 1 and "torchx: note" not in proc.stderr, proc.stderr
