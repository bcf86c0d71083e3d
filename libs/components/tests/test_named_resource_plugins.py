"""Named resources registered through ``torchx.named_resources`` entry points, as pytorch/torchx
0.7's advanced docs show, installed as a dist-info on sys.path."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

import pytest

from torchx.components import get_component
from torchx.specs import AppDef, Resource, Role, get_named_resources, named_resources

RESOURCES = """
from torchx.specs import Resource


def gpu_x1() -> Resource:
    return Resource(cpu=8,  gpu=1, memMB=61_000)


def gpu_x2() -> Resource:
    return Resource(cpu=16, gpu=2, memMB=122_000)
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_module").mkdir()
    (tmp_path / "my_module" / "__init__.py").write_text("")
    (tmp_path / "my_module" / "resources.py").write_text(RESOURCES)
    dist = tmp_path / "my_module-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-module\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[torchx.named_resources]\n"
        "gpu_x1 = my_module.resources:gpu_x1\n"
        "gpu_x2 = my_module.resources:gpu_x2\n"
        "broken = my_module.missing:gpu\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    # read the entry points again (monkeypatch puts the cached ones back afterwards)
    monkeypatch.setattr(named_resources, "_factories", None)


@pytest.mark.usefixtures("installed")
def test_registered_resources_are_used_and_a_broken_one_is_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        assert get_named_resources("gpu_x2") == Resource(cpu=16, gpu=2, memMB=122_000)
    assert "'broken'" in caplog.text and "my_module.missing" in caplog.text

    def test_app(resource: str) -> AppDef:
        return AppDef(
            name="test_app",
            roles=[Role(name="...", image="...", resource=get_named_resources(resource))],
        )

    assert test_app("gpu_x1").roles[0].resource.gpu == 1
    app = get_component("dist.ddp").call(["-h", "gpu_x2", "--script", "t.py"])
    assert app.roles[0].resource.memMB == 122_000
