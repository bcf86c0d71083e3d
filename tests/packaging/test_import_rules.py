"""tools/check_imports.py: the direction table comes from the pyproject files, and across
distributions only public names are imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from torchx_test_fixtures_scripts import load_script

REPO = Path(__file__).resolve().parents[2]


checker = load_script("check_imports", "tools/check_imports.py")


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _member(root: Path, folder: str, name: str, packages: list[str], deps: list[str]) -> None:
    includes = ", ".join(f'"src/{p.replace(".", "/")}"' for p in packages)
    _write(
        root,
        f"{folder}/pyproject.toml",
        f"""\
        [project]
        name = "{name}"
        version = "1.0.0"
        dependencies = {deps!r}

        [project.optional-dependencies]
        extra = ["torch>=2"]

        [tool.hatch.build.targets.wheel]
        only-include = [{includes}]
        sources = ["src"]
        """,
    )


def test_the_table_is_what_the_real_pyprojects_declare() -> None:
    dists = checker.load_distributions(REPO)
    assert dists["torchx-runner"].requires == {
        "torchx-specs",
        "torchx-components",
        "torchx-schedulers",
        "torchx-runtime-function",  # through its extra [function], for Executor
    }
    assert dists["torchx-devices"].packages == ("torchx.devices", "torchx.nn", "torchx.distributed")
    leaves = ("torchx-specs", "torchx-tracking", "torchx-layers", "torchx-devices")
    # what runs inside a job on its behalf is runtime: it depends on no sibling either
    for leaf in (*leaves, "torchx-runtime-function", "torchx-runtime-preemption"):
        assert dists[leaf].requires == frozenset(), leaf
    # the launcher's extras count: the CLI may import what its extras install
    assert {"torchx.pipelines", "torchx.layers"} <= checker.ALLOWED["torchx.cli"]
    # specs depends on no sibling: it may import only the other package of its own wheel
    assert checker.ALLOWED["torchx.specs"] == {"torchx.util"}
    assert checker.dependency_cycles(dists) == []


def test_a_declared_dependency_allows_the_import_and_an_undeclared_one_does_not(
    tmp_path: Path,
) -> None:
    _member(tmp_path, "libs/a", "acme-a", ["torchx.a"], [])
    _member(tmp_path, "libs/b", "acme-b", ["torchx.b", "torchx.b2"], ["acme-a>=1.0,<2", "fsspec"])
    dists = checker.load_distributions(tmp_path)
    assert dists["acme-b"].requires == {"acme-a"}  # fsspec is not a sibling
    table = checker.allowed_imports(dists)
    assert table["torchx.b"] == {"torchx.a", "torchx.b2"}
    assert table["torchx.a"] == frozenset()


def test_cycles_between_distributions_are_found(tmp_path: Path) -> None:
    _member(tmp_path, "libs/a", "acme-a", ["torchx.a"], ["acme-b"])
    _member(tmp_path, "libs/b", "acme-b", ["torchx.b"], ["acme_A>=1"])
    assert checker.dependency_cycles(checker.load_distributions(tmp_path)) == [
        ["acme-a", "acme-b", "acme-a"]
    ]


def test_a_private_name_of_another_distribution_is_refused(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "torchx/runner/bad.py",
        """\
        from torchx.specs._errors import closest
        from torchx.specs import _errors
        import torchx.schedulers._registry
        from torchx.specs import closest as fine, __all__ as also_fine
        """,
    )
    violations = checker.check_tree([tmp_path])
    assert [(v.line, v.imported, v.private_name) for v in violations] == [
        (1, "torchx.specs", "torchx.specs._errors"),
        (1, "torchx.specs", "torchx.specs._errors.closest"),
        (2, "torchx.specs", "torchx.specs._errors"),
        (3, "torchx.schedulers", "torchx.schedulers._registry"),
    ]
    assert "a private name of torchx-specs" in str(violations[0])
    assert "make this one public" in str(violations[0])


def test_private_names_inside_one_distribution_are_fine(tmp_path: Path) -> None:
    _write(tmp_path, "torchx/nn/ok.py", "from torchx.devices._scope import STATE\n")
    _write(tmp_path, "torchx/specs/ok.py", "from torchx.specs._errors import closest\n")
    assert checker.check_tree([tmp_path]) == []


def test_member_tests_may_use_their_own_privates_only(tmp_path: Path) -> None:
    _member(tmp_path, "libs/specs", "torchx-specs", ["torchx.specs"], [])
    _write(tmp_path, "libs/specs/tests/test_ok.py", "from torchx.specs._errors import closest\n")
    _write(tmp_path, "libs/specs/tests/test_bad.py", "from torchx.cli._app import app\n")
    violations = checker.check_member_tests(checker.load_distributions(tmp_path))
    assert [(v.path.name, v.private_name) for v in violations] == [
        ("test_bad.py", "torchx.cli._app"),
        ("test_bad.py", "torchx.cli._app.app"),
    ]


def test_the_real_repository_passes_both_rules() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "tools/check_imports.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "public imports: ok" in done.stdout


def test_one_module_may_import_an_optional_sibling_named_in_its_pyproject(
    tmp_path: Path,
) -> None:
    _member(tmp_path, "libs/runner", "acme-runner", ["torchx.runner"], ["acme-components>=1,<2"])
    _write(
        tmp_path,
        "libs/components/pyproject.toml",
        """\
        [project]
        name = "acme-components"
        version = "1.0.0"

        [tool.hatch.build.targets.wheel]
        only-include = ["src/torchx/components", "src/torchx/version.py"]
        sources = ["src"]

        [tool.check-imports.optional-imports]
        "torchx.components.test_base" = ["acme-runner"]
        """,
    )
    dists = checker.load_distributions(tmp_path)
    assert dists["acme-components"].packages == ("torchx.components", "torchx.version")
    assert dists["acme-components"].requires == frozenset()  # not a dependency
    assert checker.dependency_cycles(dists) == []
    table = checker.allowed_imports(dists)
    assert table["torchx.components.test_base"] == {
        "torchx.components",
        "torchx.version",
        "torchx.runner",
    }
    assert "torchx.runner" not in table["torchx.components"]
