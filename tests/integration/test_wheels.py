"""The distributions as users install them: every wheel and sdist is built, then installed
into fresh virtual environments from those files and the package index.

- ``torchx`` alone is the light launcher: no torch, kfp, kubernetes or ray; it runs an app,
  and a scheduler whose client is missing names the extra to install;
- ``torchx[all]`` installs and imports every library;
- each library installs alone and runs the first Python example of its README.

Third-party versions are held to the workspace lock (``uv export`` as constraints), so
every package comes from uv's cache when it is warm (torch included); the index is still
asked, as ``pip install`` would, which is what proves that our ``torchx`` sorts above
the index's own releases of that name.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
UV = shutil.which("uv")
MEMBERS = {
    tomllib.loads(p.read_text())["project"]["name"]: p.parent
    for p in sorted(REPO.glob("*/*/pyproject.toml"))
}
# What the launcher must not pull in (their import names are the distribution names).
HEAVY = {"torch", "kfp", "kubernetes", "ray", "docker"}
LAUNCHER_BUDGET_MB = 60

pytestmark = [pytest.mark.slow, pytest.mark.skipif(UV is None, reason="uv is not on PATH")]


def _uv(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(UV), *args], check=True, text=True, capture_output=True, cwd=cwd)


def _wheel_name(dist: str) -> str:
    return dist.replace("-", "_")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every member's sdist, and its wheel built from that sdist (uv build's default)."""
    out = tmp_path_factory.mktemp("dist")
    _uv("build", "--all-packages", "--out-dir", str(out), "--quiet", cwd=REPO)
    return out


@pytest.fixture(scope="module")
def constraints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lock's third-party versions, so installs match what the workspace tests."""
    path = tmp_path_factory.mktemp("lock") / "constraints.txt"
    _uv(
        "export", "--frozen", "--all-packages", "--all-extras", "--no-emit-workspace",
        "--no-hashes", "--no-header", "--no-annotate", "--output-file", str(path),
        cwd=REPO,
    )  # fmt: skip
    return path


class Venv:
    """A fresh virtual environment with requirements installed from ``dist`` and the index."""

    def __init__(self, root: Path, dist: Path, constraints: Path, *requirements: str) -> None:
        self.root = root
        _uv("venv", "--quiet", "--python", sys.executable, str(root))
        self.python = root / "bin" / "python"
        done = _uv(
            "pip", "install", "--python", str(self.python), "--find-links", str(dist),
            "--constraints", str(constraints), *requirements,
        )  # fmt: skip
        self.install_log = done.stderr
        self.env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        self.env["PATH"] = f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"

    def installed(self) -> dict[str, str]:
        out = _uv("pip", "list", "--python", str(self.python), "--format", "json").stdout
        return {p["name"].lower(): p["version"] for p in json.loads(out)}

    def site_packages(self) -> Path:
        (path,) = self.root.glob("lib/python3*/site-packages")
        return path

    def run(self, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args),
            cwd=cwd,
            env={**self.env, **env},
            text=True,
            capture_output=True,
            check=False,
            timeout=240,
        )


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


# -- what the files hold ----------------------------------------------------------------


def test_every_member_builds_a_wheel_and_an_sdist(dist: Path) -> None:
    wheels = sorted(p.name.split("-")[0] for p in dist.glob("*.whl"))
    sdists = sorted(p.name.split("-")[0] for p in dist.glob("*.tar.gz"))
    assert wheels == sdists == sorted(_wheel_name(m) for m in MEMBERS)


@pytest.mark.parametrize("name", sorted(MEMBERS))
def test_wheel_holds_its_packages_license_and_metadata(dist: Path, name: str) -> None:
    (whl,) = dist.glob(f"{_wheel_name(name)}-*.whl")
    with zipfile.ZipFile(whl) as z:
        files = z.namelist()
        (metadata,) = [f for f in files if f.endswith(".dist-info/METADATA")]
        meta = z.read(metadata).decode()
        (license_file,) = [f for f in files if f.endswith(".dist-info/licenses/LICENSE")]
        assert z.read(license_file) == (REPO / "LICENSE").read_bytes()
    assert "torchx/__init__.py" not in files, f"{whl.name} would shadow the namespace"
    assert any(f.endswith("/py.typed") for f in files), f"{whl.name} has no py.typed"
    assert all(f.startswith("torchx/") or ".dist-info/" in f for f in files)
    assert "License-Expression: BSD-3-Clause" in meta and "License-File: LICENSE" in meta
    assert "Description-Content-Type: text/markdown" in meta
    assert f"# {name}\n" in meta, "the README is the index page"
    assert re.search(r"^Project-URL: Homepage, https://", meta, re.M)
    assert re.search(r"^Classifier: Programming Language :: Python :: 3\.1\d$", meta, re.M)
    assert re.search(r"^Keywords: .+", meta, re.M)


@pytest.mark.parametrize("name", sorted(MEMBERS))
def test_sdist_holds_license_readme_and_sources(dist: Path, name: str) -> None:
    (sdist,) = dist.glob(f"{_wheel_name(name)}-*.tar.gz")
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
        top = tar.getmembers()[0].name.split("/")[0]
        license_member = tar.extractfile(f"{top}/LICENSE")
        assert license_member is not None
        assert license_member.read() == (REPO / "LICENSE").read_bytes()
    assert {"LICENSE", "README.md", "pyproject.toml", "PKG-INFO"} <= members
    assert any(m.startswith("src/torchx/") and m.endswith("py.typed") for m in members)


# -- the launcher alone -----------------------------------------------------------------


@pytest.fixture(scope="module")
def launcher(dist: Path, constraints: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    return Venv(tmp_path_factory.mktemp("launcher") / "venv", dist, constraints, "torchx")


def test_the_index_and_our_files_resolve_torchx_to_ours(launcher: Venv) -> None:
    installed = launcher.installed()
    ours = tomllib.loads((REPO / "apps/cli/pyproject.toml").read_text())["project"]["version"]
    assert installed["torchx"] == ours


def test_the_launcher_is_light(launcher: Venv) -> None:
    installed = launcher.installed()
    assert sorted(HEAVY & installed.keys()) == []
    assert not [n for n in installed if n.startswith(("nvidia-", "triton", "google-cloud"))]
    size = _size_mb(launcher.site_packages())
    print(f"\ntorchx launcher: {len(installed)} distributions, site-packages {size:.1f} MB")
    assert size < LAUNCHER_BUDGET_MB


def test_the_launcher_runs_an_app(launcher: Venv, tmp_path: Path) -> None:
    done = launcher.run("torchx", "run", "utils.echo", "--msg", "hi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # the handle alone on stdout; a waiting run's log and its end state on stderr
    assert done.stdout.startswith("local_cwd://") and done.stdout.count("\n") == 1
    assert "echo/0 hi\n" in done.stderr
    assert done.stderr.rstrip().endswith(" SUCCEEDED"), done.stderr


@pytest.mark.parametrize(
    ("scheduler", "cfg", "extra"),
    [
        ("local_docker", [], "docker"),
        ("kubernetes", [], "kubernetes"),
        ("ray", ["-cfg", "address=127.0.0.1:9"], "ray"),
    ],
)
def test_a_scheduler_without_its_extra_names_the_extra(
    launcher: Venv, tmp_path: Path, scheduler: str, cfg: list[str], extra: str
) -> None:
    done = launcher.run(
        # the image as it is (no workspace): the client is the first thing needed
        "torchx", "run", "-s", scheduler, *cfg, "--workspace", "", "utils.echo", "--msg", "hi",
        cwd=tmp_path,
        # nothing reachable, should the scheduler try to connect before needing its client
        DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock",
        KUBECONFIG=str(tmp_path / "no-kubeconfig"),
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("torchx: error: ")
    assert lines[0].endswith(f'install it with: pip install "torchx[{extra}]"'), lines[0]


# -- everything -------------------------------------------------------------------------


def test_torchx_all_installs_and_imports_every_library(
    dist: Path, constraints: Path, tmp_path: Path
) -> None:
    venv = Venv(tmp_path / "venv", dist, constraints, "torchx[all]")
    assert set(MEMBERS) <= venv.installed().keys()
    sys.path.insert(0, str(REPO / "tools"))
    try:
        from check_imports import DISTRIBUTIONS
    finally:
        sys.path.remove(str(REPO / "tools"))
    packages = sorted(p for d in DISTRIBUTIONS.values() for p in d.packages)
    code = (
        "import importlib, sys\n"
        f"for name in {[*packages, *sorted(HEAVY)]!r}:\n"
        "    module = importlib.import_module(name)\n"
        "    where = getattr(module, '__file__', None) or list(module.__path__)[0]\n"
        "    assert where.startswith(sys.prefix), (name, where)\n"
        "    print(name)\n"
    )
    done = venv.run(str(venv.python), "-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [*packages, *sorted(HEAVY)]


# -- each library alone -----------------------------------------------------------------


def readme_example(member: Path) -> str:
    """The first Python block of a README: the smallest real use it shows."""
    match = re.search(r"^```python\n(.*?)^```", (member / "README.md").read_text(), re.M | re.S)
    assert match, f"{member}/README.md has no Python example"
    return match.group(1)


def printed_expectations(code: str) -> list[str]:
    """What the example says its prints show: ``print(x)  # shown`` -> ``shown``."""
    return [m.group(1).strip() for m in re.finditer(r"^\s*print\(.*\)\s*#\s*(.+)$", code, re.M)]


@pytest.mark.parametrize(
    "name",
    [
        "torchx-specs",
        "torchx-tracking",
        "torchx-runtime-function",
        "torchx-runtime-preemption",
        "torchx-layers",
        "torchx-devices",
        "torchx-components",
        "torchx-schedulers",
        "torchx-runner",
        "torchx-pipelines",
    ],
)
def test_each_library_installs_alone_and_its_readme_example_runs(
    dist: Path, constraints: Path, tmp_path: Path, name: str
) -> None:
    venv = Venv(tmp_path / "venv", dist, constraints, name)
    siblings = {m for m in MEMBERS if m != name} & venv.installed().keys()
    declared = set(
        tomllib.loads((MEMBERS[name] / "pyproject.toml").read_text())["project"]["dependencies"]
    )
    assert all(any(d.startswith(s) for d in declared) for s in siblings), (
        f"{name} alone brought {sorted(siblings)}, which it does not declare"
    )
    code = readme_example(MEMBERS[name]).replace("/tmp/foobar", str(tmp_path / "results"))
    # The devices example scopes to cuda:0; its documented fallback runs it on the CPU here.
    done = venv.run(str(venv.python), "-c", code, cwd=tmp_path, TORCHX_MISSING_GPU="cpu")
    assert done.returncode == 0, f"{name} README example failed:\n{code}\n{done.stderr}"
    shown = iter(done.stdout.splitlines())
    for expected in printed_expectations(code):
        if expected.endswith("..."):
            prefix = expected.removesuffix("...").rstrip()
            found = any(line.startswith(prefix) for line in shown)
        else:
            found = any(line == expected for line in shown)
        assert found, f"{name} README says it prints {expected!r}; it printed:\n{done.stdout}"
