"""The version policy of VERSIONING.md, checked over every member's pyproject.toml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PROJECTS: dict[str, dict[str, Any]] = {
    (data := tomllib.loads(p.read_text()))["project"]["name"]: data["project"]
    for p in sorted(REPO.glob("*/*/pyproject.toml"))
}
VERSIONS = {name: Version(project["version"]) for name, project in PROJECTS.items()}

# pytorch/torchx's releases on the public index: ours must sort above every one.
UPSTREAM_RELEASES = [
    "0.1.0", "0.1.1", "0.1.2", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0"
]  # fmt: skip
# Their public API is pytorch/torchx 0.7's, so they are stable (VERSIONING.md).
STABLE = {
    "torchx",
    "torchx-specs",
    "torchx-components",
    "torchx-schedulers",
    "torchx-runner",
    "torchx-tracking",
}


def next_breaking(version: Version) -> Version:
    """The first version that may break callers of ``version``: next major, or 0.x minor."""
    if version.major >= 1:
        return Version(f"{version.major + 1}")
    return Version(f"0.{version.minor + 1}")


def sibling_requirements(project: dict[str, Any]) -> list[tuple[str, Requirement]]:
    """(where, requirement) for each requirement on another workspace member."""
    found = [("dependencies", Requirement(r)) for r in project.get("dependencies", [])]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        found += [(f"extra {extra!r}", Requirement(r)) for r in reqs]
    return [
        (where, req)
        for where, req in found
        if canonicalize_name(req.name) in PROJECTS and req.name != project["name"]
    ]


def test_the_launcher_sorts_above_every_upstream_release() -> None:
    ours = VERSIONS["torchx"]
    assert all(ours > Version(v) for v in UPSTREAM_RELEASES)
    assert ours.major >= 1, "torchx never goes back to 0.x, where pytorch/torchx releases"


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_a_final_release_version(name: str) -> None:
    version = VERSIONS[name]
    assert str(version) == PROJECTS[name]["version"], "write versions in normal form"
    assert len(version.release) == 3 and not (version.is_prerelease or version.local), (
        f"{name} {version}: the tree holds X.Y.Z versions only"
    )
    assert (version.major >= 1) == (name in STABLE), (
        f"{name} {version}: stable distributions are 1.x and the others 0.x (VERSIONING.md)"
    )


def range_problem(req: Requirement, sibling: Version) -> str | None:
    """What is wrong with ``req`` on a sibling at version ``sibling``, or None."""
    bounds = {spec.operator: Version(spec.version) for spec in req.specifier}
    if set(bounds) != {">=", "<"} or len(req.specifier) != 2:
        return "write a range '>=X.Y,<NEXT' (VERSIONING.md)"
    if sibling not in req.specifier:
        return f"it excludes {req.name} {sibling} of this tree"
    if bounds["<"] != next_breaking(sibling):
        return f"the upper bound is {req.name}'s next breaking version, {next_breaking(sibling)}"
    if next_breaking(bounds[">="]) != next_breaking(sibling):
        return f"the lower bound is in {req.name} {sibling}'s compatible series"
    return None


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_siblings_are_required_by_compatible_range(name: str) -> None:
    problems = [
        f"{name} {where}: {req}: {problem}"
        for where, req in sibling_requirements(PROJECTS[name])
        if (problem := range_problem(req, VERSIONS[canonicalize_name(req.name)]))
    ]
    assert problems == []


@pytest.mark.parametrize(
    ("requirement", "sibling", "fault"),
    [
        ("torchx-specs>=1.0,<2", "1.3.0", None),
        ("torchx-specs>=1.3,<2", "1.3.0", None),
        ("torchx-layers>=0.3,<0.4", "0.3.1", None),
        ("torchx-specs>=0.1,<0.2", "1.3.0", "excludes"),  # stale after a major bump
        ("torchx-specs>=1.0", "1.3.0", "write a range"),  # open-ended
        ("torchx-specs==1.3.0", "1.3.0", "write a range"),  # exact pin
        ("torchx-specs>=1.0,<3", "1.3.0", "upper bound"),  # lets a breaking 2.x in
        ("torchx-layers>=0.2,<0.4", "0.3.1", "lower bound"),  # spans a 0.x break
    ],
)
def test_range_problem_rejects_what_the_policy_forbids(
    requirement: str, sibling: str, fault: str | None
) -> None:
    problem = range_problem(Requirement(requirement), Version(sibling))
    if fault is None:
        assert problem is None
    else:
        assert problem is not None and fault in problem


@pytest.mark.parametrize("name", sorted(STABLE))
def test_stable_distributions_require_only_stable_siblings(name: str) -> None:
    required = [r for where, r in sibling_requirements(PROJECTS[name]) if where == "dependencies"]
    unstable = [str(r) for r in required if VERSIONS[canonicalize_name(r.name)].major < 1]
    assert unstable == [], f"{name}: 0.x siblings belong in extras: {unstable}"
