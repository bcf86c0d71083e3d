"""Components from a user's package, registered through the ``torchx.components`` entry
points as pytorch/torchx 0.7's advanced docs show, installed as a dist-info on sys.path."""

from __future__ import annotations

import importlib
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchx.components import get_component, list_components
from torchx.specs import finder

TRAINER = '''
import torchx.specs as specs


def trainer(name: str = "trainer", image: str = "/tmp") -> specs.AppDef:
    """Trains.

    Args:
        name: the app name
        image: where it runs
    """
    return specs.AppDef(name=name, roles=[specs.Role(name="t", image=image, entrypoint="true")])
'''


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    pkg = site / "my_project" / "bar"
    pkg.mkdir(parents=True)
    (site / "my_project" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "baz.py").write_text(TRAINER)
    dist = site / "my_project-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-project\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent(
            """
            [torchx.components]
            foo = my_project.bar
            _0 = my_project.bar
            broken = my_project_missing.components
            """
        )
    )
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    return site


def test_entry_point_components_are_found_and_listed_with_the_builtins(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        names = set(list_components())
    assert {"foo.baz.trainer", "baz.trainer", "utils.echo", "dist.ddp"} <= names
    # the broken plug-in is named in a warning and hides nothing else
    assert any("'broken'" in r.getMessage() and "my_project_missing" in r.getMessage()
               for r in caplog.records)  # fmt: skip
    app = get_component("foo.baz.trainer").call(["--name", "test_app"])
    assert app.name == "test_app"
    assert get_component("baz.trainer").fn is get_component("foo.baz.trainer").fn
    # pytorch/torchx's finder API answers from the same discovery
    assert {"foo.baz.trainer", "baz.trainer", "utils.echo"} <= set(finder.get_components())
    assert finder.get_component("foo.baz.trainer").fn_name == "trainer"


def test_torchx_builtins_lists_them(site: Path) -> None:
    torchx = str(Path(sys.executable).with_name("torchx"))
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([torchx, "builtins"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    listed = [line.split(". ", 1)[1] for line in proc.stdout.splitlines()[1:]]
    assert "foo.baz.trainer" in listed and "baz.trainer" in listed and "utils.echo" in listed
    assert proc.stdout.startswith(f"Found {len(listed)} builtin components:\n")
    assert "broken" in proc.stderr and proc.stderr.count("\n") == 1
    run = subprocess.run(
        [torchx, "run", "--dryrun", "foo.baz.trainer", "--name", "test_app"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "AppDef test_app" in run.stdout
