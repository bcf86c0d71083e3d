"""pytorch/torchx 0.7's tracker example, set up as its directory sets it up: a package whose
dist-info registers ``fsspec=torchx.tracker.backend.fsspec:create`` under the
``torchx.tracker`` entry-point group, a ``.torchxconfig`` naming that tracker, and the
``fsspec_backend.conf`` it points at (``protocol`` and ``root_path``). The app makes the
example's tracker calls (its MNIST training, which downloads data, is left out), and the
three ``torchx tracker list`` commands its docs show read the run back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent
TORCHX = BIN / "torchx"

# The example's calls, in its order: metadata from its settings, then two artifacts.
APP = textwrap.dedent(
    """
    import pathlib
    import torchx.tracker as tracker

    train_kwargs = {"batch_size": 64}
    app_run = tracker.app_run_from_env()
    app_run.add_metadata(**train_kwargs)
    app_run.add_metadata(lr=1.0, gamma=0.7)
    app_run.add_metadata(data_path="../data")
    app_run.add_artifact("tensorboard", "/tmp/tb")
    pathlib.Path("mnist_cnn.pt").write_bytes(b"weights")
    cwd = pathlib.Path().resolve()
    app_run.add_artifact("model", f"{cwd}/mnist_cnn.pt")
    """
)


def _torchx(work: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [str(TORCHX), *args], cwd=work, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, f"torchx {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _listing(work: Path, env: dict[str, str], *args: str) -> Any:
    return json.loads(_torchx(work, env, "tracker", "list", *args, "--json"))


# "fsspec" is the example's own entry-point name; "from_dist_info" exists only in the
# temporary dist-info, so that case passes only if the entry point is really read.
@pytest.mark.parametrize("name", ["fsspec", "from_dist_info"])
def test_the_0_7_tracker_example_setup_records_and_lists(name: str, tmp_path: Path) -> None:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    site = tmp_path / "site"
    dist_info = site / "tracker_example-0.0.1.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tracker-example\nVersion: 0.0.1\n"
    )
    (dist_info / "entry_points.txt").write_text(
        "[torchx.tracker]\nfsspec=torchx.tracker.backend.fsspec:create\n"
        "from_dist_info=torchx.tracker.backend.fsspec:create\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    root = tmp_path / "torchx_jobs"
    (work / "fsspec_backend.conf").write_text(
        "# 'protocol' and 'root_path' are required config options\n"
        f"protocol=file\nroot_path={root}\n"
    )
    (work / ".torchxconfig").write_text(
        f"[torchx:tracker]\n{name}={name}\n\n"
        f"[tracker:{name}]\nconfig={work / 'fsspec_backend.conf'}\n"
    )
    (work / "main.py").write_text(APP)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHX_")}
    env["PATH"] = f"{BIN}:{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(site)

    out = _torchx(work, env, "run", "-s", "local_cwd", "utils.python", "--script", "main.py")
    handle = out.strip().splitlines()[-1]
    assert handle.startswith("local_cwd://torchx/"), out

    assert {"job_id": handle} in _listing(work, env, "jobs")
    metadata = _listing(work, env, "metadata", handle)["metadata"]
    assert metadata == {"batch_size": 64, "lr": 1.0, "gamma": 0.7, "data_path": "../data"}
    artifacts = {a["name"]: a["path"] for a in _listing(work, env, "artifacts", handle)}
    assert artifacts["tensorboard"] == "/tmp/tb"
    assert Path(artifacts["model"]).read_bytes() == b"weights"
    only_model = _listing(work, env, "artifacts", "--artifact", "model", handle)
    assert [a["name"] for a in only_model] == ["model"]
    assert any(root.rglob("*")), "the run was kept under the config file's root_path"
