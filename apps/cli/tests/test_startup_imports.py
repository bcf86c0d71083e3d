"""What ``torchx --help`` and ``torchx run --dryrun`` load: none of the heavy client libraries
and none of the feature modules a plain dryrun does not use (sweeps, function apps, events),
so every new feature keeps off the command's start-up path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Runs the CLI in-process and, at exit (the CLI ends with SystemExit), writes what it loaded.
_PROBE = """
import atexit, json, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["torchx", *sys.argv[2:]]
from torchx.cli.main import run
run()
"""

NOT_AT_STARTUP = (
    "torch",
    "kfp",
    "docker",
    "kubernetes",
    "ray",
    "cloudpickle",
    "fsspec",
    "concurrent.futures",
    "torchx.runner._sweep",
    "torchx.runner._sweeps",
    "torchx.runner._executor",
    "torchx.runner.events",
    "torchx.pipelines",
    "torchx.layers",
)


@pytest.mark.parametrize("argv", [["--help"], ["run", "--dryrun", "utils.echo"]])
def test_start_up_loads_no_heavy_or_unused_module(argv: list[str], tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(out), *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(out.read_text()))
    assert "torchx.cli.main" in loaded  # the probe really ran the CLI
    offenders = sorted(
        name
        for name in loaded
        if any(name == banned or name.startswith(banned + ".") for banned in NOT_AT_STARTUP)
    )
    assert offenders == []
