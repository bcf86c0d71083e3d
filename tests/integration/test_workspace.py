"""The workspace's own rules: namespace packages, member layout, dependency direction."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib
from torchx_test_fixtures_scripts import load_script

REPO = Path(__file__).resolve().parents[2]
MEMBERS = sorted(p.parent for p in REPO.glob("*/*/pyproject.toml"))


checker = load_script("check_imports", "tools/check_imports.py")


def test_eleven_members() -> None:
    names = {tomllib.loads((m / "pyproject.toml").read_text())["project"]["name"] for m in MEMBERS}
    assert names == {
        "torchx-specs",
        "torchx-components",
        "torchx-schedulers",
        "torchx-runner",
        "torchx-pipelines",
        "torchx-tracking",
        "torchx-layers",
        "torchx-devices",
        "torchx-runtime-function",
        "torchx-runtime-preemption",
        "torchx",
    }


def test_torchx_is_a_namespace_everywhere() -> None:
    stray = [p for m in MEMBERS for p in m.glob("src/torchx/__init__.py")]
    stray += [p for m in MEMBERS for p in m.glob("src/torchx/runtime/__init__.py")]
    assert stray == [], f"torchx must stay a PEP 420 namespace; remove {stray}"


@pytest.mark.parametrize("member", MEMBERS, ids=lambda p: p.name)
def test_member_layout(member: Path) -> None:
    meta = tomllib.loads((member / "pyproject.toml").read_text())
    assert meta["build-system"]["build-backend"] == "hatchling.build"
    assert meta["project"]["version"], "each member has its own static version"
    assert (member / "README.md").read_text().strip()
    assert (member / "tests").is_dir()
    leaves = [p.parent for p in (member / "src/torchx").rglob("py.typed")]
    assert leaves, f"{member} ships no py.typed"
    for dep in meta["project"].get("dependencies", []):
        if dep.startswith("torchx"):
            assert any(op in dep for op in (">=", "<", "~=")), f"{dep}: use a range, not a pin"
            assert "==" not in dep, f"{dep}: sibling dependencies are ranges"


def test_real_tree_respects_dependency_direction() -> None:
    violations = checker.check_tree(checker.member_src_roots(REPO))
    assert violations == [], "\n".join(map(str, violations))


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(
    ("rel", "source", "importer", "imported"),
    [
        ("torchx/specs/bad.py", "import torchx.runner\n", "torchx.specs", "torchx.runner"),
        (
            "torchx/runtime/tracking/bad.py",
            "from torchx.specs import AppDef\n",
            "torchx.runtime.tracking",
            "torchx.specs",
        ),
        (
            "torchx/specs/lazy.py",
            "def f():\n    from torchx import runner\n",
            "torchx.specs",
            "torchx.runner",
        ),
        (
            "torchx/components/rel.py",
            "from ..schedulers import x\n",
            "torchx.components",
            "torchx.schedulers",
        ),
        ("torchx/layers/x.py", "import torchx.devices as tx\n", "torchx.layers", "torchx.devices"),
    ],
)
def test_forbidden_import_fails_the_check(
    tmp_path: Path, rel: str, source: str, importer: str, imported: str
) -> None:
    _write(tmp_path, rel, source)
    violations = checker.check_tree([tmp_path])
    assert [(v.importer, v.imported) for v in violations] == [(importer, imported)]
    assert "must not import" in str(violations[0])


def test_allowed_imports_pass(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "torchx/runner/ok.py",
        "from torchx.specs import AppDef\nimport torchx.schedulers\n",
    )
    _write(tmp_path, "torchx/cli/ok.py", "from torchx.runner import get_runner\nimport os\n")
    _write(tmp_path, "torchx/nn/ok.py", "from torchx.devices import device_scope\n")
    assert checker.check_tree([tmp_path]) == []


def test_a_torchx_workspace_of_this_repository_leaves_out_its_environments() -> None:
    """``torchx run -s local_docker|kubernetes|ray ...`` from a clone takes the clone as the
    workspace; its virtualenv (gigabytes) and caches stay behind, its sources go."""
    from torchx.workspace.api import is_ignored, read_ignore_patterns

    patterns = read_ignore_patterns(str(REPO))
    for left_out in (".venv/bin/python", ".venv-py310/lib", ".git/HEAD", "dist/x.whl"):
        assert is_ignored(left_out, patterns), left_out
    for kept in ("README.md", "libs/specs/pyproject.toml", "examples/cli/ddp_train.py"):
        assert not is_ignored(kept, patterns), kept
