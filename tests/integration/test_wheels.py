"""Every member builds as a wheel, and torchx-specs installs and works alone."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UV = shutil.which("uv")

pytestmark = pytest.mark.skipif(UV is None, reason="uv is not on PATH")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [str(UV), "build", "--all-packages", "--wheel", "--out-dir", str(out), "--quiet"],
        cwd=REPO,
        check=True,
    )
    return out


def test_every_member_builds_a_wheel(wheels: Path) -> None:
    names = sorted(p.name.split("-")[0] for p in wheels.glob("*.whl"))
    assert names == sorted(
        [
            "torchx",
            "torchx_components",
            "torchx_devices",
            "torchx_layers",
            "torchx_pipelines",
            "torchx_runner",
            "torchx_schedulers",
            "torchx_specs",
            "torchx_tracking",
        ]
    )
    for whl in wheels.glob("*.whl"):
        files = zipfile.ZipFile(whl).namelist()
        assert "torchx/__init__.py" not in files, f"{whl.name} would shadow the namespace"
        assert any(f.endswith("/py.typed") for f in files), f"{whl.name} has no py.typed"
        assert all(f.startswith("torchx/") or ".dist-info/" in f for f in files), (
            f"{whl.name} ships files outside torchx/"
        )


def test_specs_wheel_installs_and_works_alone(wheels: Path, tmp_path: Path) -> None:
    (wheel,) = wheels.glob("torchx_specs-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(UV), "pip", "install", "--quiet", "--offline", "--python", str(python), str(wheel)],
        check=True,
    )
    code = (
        "import importlib.util, torchx.specs as s\n"
        "app = s.AppDef('echo', [s.Role('echo', image='/tmp', entrypoint='/bin/echo',"
        " args=['hello'])])\n"
        "s.validate_app(app)\n"
        "print(s.resource(h='gpu.small').gpu, s.parse_app_handle('local_cwd://x/y').app_id)\n"
        "print(importlib.util.find_spec('torchx.runner') is None, s.__file__)\n"
    )
    out = subprocess.run(
        [str(python), "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path
    ).stdout.split()
    assert out[:3] == ["1", "y", "True"]
    assert out[3].startswith(str(venv)), "torchx.specs must come from the fresh venv"
