"""kfp's exact pins of requests and urllib3 stay with torchx-pipelines.

Every library of the workspace except torchx-pipelines must install without kfp, so none
may depend on kfp or kfp-kubernetes, nor pin requests or urllib3 to one version."""

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")

ROOT = Path(__file__).resolve().parents[2]
KFP_ONLY = {"kfp", "kfp-kubernetes"}
PINNED_BY_KFP = {"requests", "urllib3"}


def _requirements(pyproject: Path) -> list[str]:
    project = tomllib.loads(pyproject.read_text())["project"]
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs.extend(extra)
    return reqs


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return match.group(0).lower().replace("_", "-")


def test_only_torchx_pipelines_depends_on_kfp() -> None:
    libraries = sorted(ROOT.glob("libs/*/pyproject.toml"))
    assert any(p.parent.name == "pipelines" for p in libraries)
    offenders = []
    for pyproject in libraries:
        if pyproject.parent.name == "pipelines":
            continue
        for req in _requirements(pyproject):
            name = _name(req)
            if name in KFP_ONLY or (name in PINNED_BY_KFP and "==" in req):
                offenders.append(f"{pyproject.parent.name}: {req}")
    assert offenders == []


def test_torchx_pipelines_declares_kfp_2() -> None:
    reqs = _requirements(ROOT / "libs/pipelines/pyproject.toml")
    kfp = [r for r in reqs if _name(r) == "kfp"]
    assert kfp and ">=2" in kfp[0]
