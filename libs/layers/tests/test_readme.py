"""The library README's Python blocks run as written, in order, as one script: each
block builds on the ones above it (the imports of the first, the model of the third)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_python_blocks_run_in_order_as_written(tmp_path: Path) -> None:
    text = README.read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    # every block is run: none is left out because its fence is written differently
    assert len(blocks) == text.count("```python") > 0
    proc = subprocess.run(
        [sys.executable, "-c", "\n".join(blocks)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # a block saves a spec file
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # the first block prints what its comments say
    assert proc.stdout.splitlines()[:2] == [
        "torch.Size([16, 20])",
        "Linear(in_features=10, out_features=20, bias=True)",
    ]
