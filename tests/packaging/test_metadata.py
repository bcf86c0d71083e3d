"""What each distribution's index page shows: license, URLs, classifiers, keywords, README."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
MEMBERS = sorted(p.parent for p in REPO.glob("*/*/pyproject.toml"))
# The project's own repository: every project URL points into it, and only there.
REPOSITORY = "https://github.com/torchx-project/torchx"
# The Python versions CI runs (.ci/run): the classifiers claim these and no others.
TESTED_PYTHONS = {"3.10", "3.11"}


def _project(member: Path) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((member / "pyproject.toml").read_text())["project"]
    return project


def test_the_root_license_is_bsd_3_clause() -> None:
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "Neither the name of the copyright holder" in text


@pytest.mark.parametrize("member", MEMBERS, ids=lambda p: p.name)
def test_license_file_and_expression(member: Path) -> None:
    project = _project(member)
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    assert (member / "LICENSE").read_bytes() == (REPO / "LICENSE").read_bytes(), (
        f"{member.name}/LICENSE must be a copy of the root LICENSE: "
        f"cp LICENSE {member.relative_to(REPO)}"
    )


@pytest.mark.parametrize("member", MEMBERS, ids=lambda p: p.name)
def test_urls_classifiers_and_keywords(member: Path) -> None:
    project = _project(member)
    urls = project["urls"]
    assert {"Homepage", "Documentation", "Issues"} <= set(urls)
    assert all(url.startswith(REPOSITORY) for url in urls.values()), urls
    assert urls["Documentation"].startswith(f"{REPOSITORY}/tree/main/{member.relative_to(REPO)}")
    assert project["requires-python"] == f">={min(TESTED_PYTHONS)}"
    classifiers = project["classifiers"]
    claimed = {c.rsplit(" :: ", 1)[1] for c in classifiers if re.fullmatch(r".*:: 3\.\d+", c)}
    assert claimed == TESTED_PYTHONS
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")], (
        "the license expression says it; license classifiers are deprecated"
    )
    assert project["keywords"] and project["description"]
    assert project["readme"] == "README.md"


@pytest.mark.parametrize("member", MEMBERS, ids=lambda p: p.name)
def test_readme_reads_as_an_index_page(member: Path) -> None:
    name = _project(member)["name"]
    readme = (member / "README.md").read_text()
    assert readme.startswith(f"# {name}\n"), "the page opens with the distribution's name"
    assert re.search(rf'pip install "?{re.escape(name)}[\[" \n]', readme), (
        f"{name}'s README says how to install it"
    )
    relative = [
        link
        for link in re.findall(r"\]\(([^)]+)\)", readme)
        if not link.startswith(("https://", "http://", "#"))
    ]
    assert relative == [], f"relative links do not resolve on an index page: {relative}"


def test_torchx_extras_pass_through_and_are_documented() -> None:
    cli = _project(REPO / "apps/cli")
    schedulers = _project(REPO / "libs/schedulers")
    extras = cli["optional-dependencies"]
    for extra in schedulers["optional-dependencies"]:
        assert [r.split(">=")[0] for r in extras[extra]] == [f"torchx-schedulers[{extra}]"]
    assert set(extras) == {
        "docker", "kubernetes", "ray", "pipelines", "kfp", "layers", "devices", "function",
        "preemption", "all",
    }  # fmt: skip
    assert extras["kfp"] == extras["pipelines"], "kfp is pytorch/torchx 0.7's name for it"
    assert extras["all"] == [f"torchx[{','.join(e for e in extras if e not in ('all', 'kfp'))}]"]
    readme = (REPO / "apps/cli/README.md").read_text()
    for extra in extras:
        assert f"torchx[{extra}]" in readme, f"apps/cli/README.md does not document [{extra}]"


def test_the_launcher_requires_no_heavy_library() -> None:
    required = " ".join(_project(REPO / "apps/cli")["dependencies"])
    for heavy in ("torchx-pipelines", "torchx-layers", "torchx-devices", "torch>", "kfp"):
        assert heavy not in required


def test_the_root_readme_lists_every_distribution() -> None:
    readme = (REPO / "README.md").read_text()
    rows = re.findall(r"^\| \[([^\]]+)\]\([^)]+\) \| ([^ |]+) \|", readme, re.MULTILINE)
    assert sorted(rows) == sorted(
        (str(m.relative_to(REPO)), _project(m)["name"]) for m in MEMBERS
    ), "README.md's table of packages: one row per workspace member, folder and name"
