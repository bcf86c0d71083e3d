"""Shared helpers: AppDefs built the way the builtin components build them, and a
compile-and-load-back fixture that goes through kfp's real compiler."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import torchx.specs as specs

IMAGE = "registry.example.com/example/trainer:1.0"


def copy_app(src: str, dst: str, **role_kw: Any) -> specs.AppDef:
    """A copy stage: ``python -m <module> --src ... --dst ...``."""
    return specs.AppDef(
        name="copy",
        roles=[
            specs.Role(
                name="copy",
                image=IMAGE,
                entrypoint="python",
                args=["-m", "torchx.apps.utils.copy_main", "--src", src, "--dst", dst],
                **role_kw,
            )
        ],
    )


def python_app(module: str, *args: str, name: str = "python", **role_kw: Any) -> specs.AppDef:
    """A python stage: ``python -m <module> <args>``."""
    return specs.AppDef(
        name=name,
        roles=[
            specs.Role(
                name=name,
                image=IMAGE,
                entrypoint="python",
                args=["-m", module, *args],
                **role_kw,
            )
        ],
    )


class Compiled:
    """A compiled pipeline, loaded back from the YAML that kfp wrote."""

    def __init__(self, text: str) -> None:
        self.text = text
        docs = [d for d in yaml.safe_load_all(text) if d]
        self.spec: dict[str, Any] = docs[0]
        self.platform: dict[str, Any] = docs[1]["platforms"] if len(docs) > 1 else {}

    @property
    def tasks(self) -> dict[str, Any]:
        tasks: dict[str, Any] = self.spec["root"]["dag"]["tasks"]
        return tasks

    def container(self, task: str) -> dict[str, Any]:
        executor = self.spec["components"][self.tasks[task]["componentRef"]["name"]][
            "executorLabel"
        ]
        container: dict[str, Any] = self.spec["deploymentSpec"]["executors"][executor]["container"]
        return container

    def kubernetes(self, task: str) -> dict[str, Any]:
        executor = self.spec["components"][self.tasks[task]["componentRef"]["name"]][
            "executorLabel"
        ]
        k8s: dict[str, Any] = self.platform["kubernetes"]["deploymentSpec"]["executors"][executor]
        return k8s


CompileFn = Callable[[Callable[..., Any]], Compiled]


@pytest.fixture
def compile_pipeline(tmp_path: Path) -> CompileFn:
    from kfp import compiler

    counter = iter(range(1_000))

    def run(pipeline: Callable[..., Any]) -> Compiled:
        out = tmp_path / f"pipeline{next(counter)}.yaml"
        compiler.Compiler().compile(pipeline, str(out))
        return Compiled(out.read_text())

    return run


class Apps:
    """AppDef factories for tests (a fixture, since tests cannot import conftest)."""

    image = IMAGE
    copy = staticmethod(copy_app)
    python = staticmethod(python_app)


@pytest.fixture
def apps() -> type[Apps]:
    return Apps
