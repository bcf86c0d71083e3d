"""``torchx run`` with a relative XDG_STATE_HOME keeps its state under the home folder,
as the XDG spec says, not in whatever directory the command runs in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_a_run_with_a_relative_value_leaves_the_working_directory_alone(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    torchx = Path(sys.executable).with_name("torchx")
    env = {**os.environ, "XDG_STATE_HOME": "state", "HOME": str(home)}
    env.pop("TORCHXCONFIG", None)
    done = subprocess.run(
        [str(torchx), "run", "utils.echo", "--msg", "hi"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert list(work.iterdir()) == []
    assert (home / ".local" / "state" / "torchx").is_dir()
