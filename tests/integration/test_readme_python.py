"""The root README's Python snippet runs as written and prints what its comments say."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_python_snippet_prints_what_its_comments_promise(tmp_path: Path) -> None:
    (code,) = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    promised = [
        m.group(1).split(":")[0].strip()
        for line in code.splitlines()
        if line.lstrip().startswith("print(") and (m := re.search(r"#\s*(.+)$", line))
    ]
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == promised == ["SUCCEEDED", "True"]
