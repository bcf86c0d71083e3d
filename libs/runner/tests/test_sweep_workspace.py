"""A sweep's workspace is built once, and every trial runs what was built.

The image build is counted on a local_docker scheduler whose engine is not called: what
the Docker engine does with the build is tested in tests/integration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from torchx.runner import Runner, Sweep
from torchx.runner._sweeps import trial_app
from torchx.schedulers.docker_scheduler import DockerScheduler

# (base image, workspace) of each build, in order
_builds: list[tuple[str, str]] = []


def _counting_build(
    self: DockerScheduler, base_image: str, workspace: str, quiet: bool = True
) -> str:
    _builds.append((base_image, workspace))
    return f"torchx-workspace:built{len(_builds)}"


@pytest.fixture(autouse=True)
def _counted_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registered local_docker (the one a sweep's driver process would build too)
    counts its builds instead of calling the engine."""
    _builds.clear()
    monkeypatch.setattr(DockerScheduler, "build_workspace_image", _counting_build)


def _runner() -> Runner:
    from torchx.schedulers import get_scheduler_factories

    return Runner("torchx", get_scheduler_factories())


def _trial_images(runner: Runner, plan: Any) -> list[str]:
    from torchx.components import get_component

    schema = get_component(plan.record.component)
    apps = [trial_app(runner, schema, plan.record, i) for i in plan.indices]
    return [app.roles[0].image for app in apps]


def test_one_build_for_every_trial(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    runner = _runner()
    sweep = Sweep.from_cli("utils.python", ["m=a,b,c"], ["--image", "base:1"], 0)
    plan = runner.dryrun_sweep(sweep, "local_docker", workspace=str(tmp_path))
    assert _builds == [("base:1", str(tmp_path))]
    assert plan.record.images == {"base:1": "torchx-workspace:built1"}
    assert plan.record.workspace is None and plan.record.built_workspace == str(tmp_path)
    assert _trial_images(runner, plan) == ["torchx-workspace:built1"] * 3
    assert "torchx-workspace:built1" in str(plan.request)
    assert len(_builds) == 1  # making the trials' apps built nothing more


def test_a_swept_image_is_built_once_per_image(tmp_path: Path) -> None:
    runner = _runner()
    sweep = Sweep.from_cli("utils.python", ["image=a:1,b:1,a:1"], ["-m", "x"], 0)
    plan = runner.dryrun_sweep(sweep, "local_docker", workspace=str(tmp_path))
    assert [base for base, _ in _builds] == ["a:1", "b:1"]
    assert _trial_images(runner, plan) == [
        "torchx-workspace:built1",
        "torchx-workspace:built2",
        "torchx-workspace:built1",
    ]


def test_no_workspace_builds_nothing() -> None:
    runner = _runner()
    sweep = Sweep.from_cli("utils.python", ["m=a,b"], ["--image", "base:1"], 0)
    plan = runner.dryrun_sweep(sweep, "local_docker")
    assert _builds == [] and plan.record.images == {}
    assert _trial_images(runner, plan) == ["base:1", "base:1"]
