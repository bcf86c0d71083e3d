"""pytorch/torchx 0.7's ``torchx.pipelines.kfp.adapter`` names, on kfp v2.

kfp 2 removed the v1 objects 0.7's adapter made (``ContainerOp``, ``ResourceOp``,
sidecars), so each name does what kfp v2 can:

- ``component_from_app(app)``: a kfp v2 container component (compile or upload it alone
  like any other); called inside a ``@dsl.pipeline`` it adds the app as a task with its
  resources and retries set, as the v1 factory did;
- ``container_from_app(app, **inputs)``: the app as a task of the pipeline being defined
  (``task_from_app``), resources and retries set;
- ``component_spec_from_app(app)``: the component as kfp v2 YAML, and the role;
- ``resource_from_app``: a Volcano job needs ``ResourceOp``, which kfp v2 does not have; it
  raises ``KfpAdapterError`` saying what to do instead.

Nothing here imports kfp until a function is called.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import Any, Protocol, cast

from torchx.pipelines.kfp._component import component_from_app as _component
from torchx.pipelines.kfp._errors import KfpAdapterError
from torchx.pipelines.kfp._lazy import kfp_kubernetes
from torchx.pipelines.kfp._resources import task_resources
from torchx.pipelines.kfp._task import task_from_call
from torchx.specs import AppDef, Role

# Where 0.7's UI-metadata sidecar wrote the kfp v1 output viewer's file.
METADATA_FILE = "/tmp/outputs/mlpipeline-ui-metadata/data.json"


class ContainerFactory(Protocol):
    """What ``component_from_app`` returns: called (inside a pipeline) it makes a task."""

    def __call__(self, *args: object, **kwargs: object) -> Any: ...


class KFPContainerFactory(ContainerFactory, Protocol):
    """A ContainerFactory that also carries its kfp ``component_spec``."""

    component_spec: Any


def _no_ui_metadata(ui_metadata: Mapping[str, object] | None) -> None:
    if ui_metadata is not None:
        raise KfpAdapterError(
            "ui_metadata",
            dict(ui_metadata),
            "kfp v2 has no v1 output viewer: write a Markdown or HTML artifact from the app "
            "(output_path(NAME)) to show results in the UI",
        )


def component_from_app(
    app: AppDef, ui_metadata: Mapping[str, object] | None = None
) -> KFPContainerFactory:
    """``app``'s single role as a kfp v2 container component (a ``ContainerComponent``),
    which kfp compiles and uploads like any other. Called inside a ``@dsl.pipeline``
    (inputs by name) it adds a task with the role's resources and retries, as 0.7's
    factory did. ``ui_metadata`` is refused: kfp v2 has no v1 output viewer."""
    from torchx.pipelines.kfp._factory import app_component

    _no_ui_metadata(ui_metadata)
    component = app_component(app)
    # Refuse what the task could not carry now, as 0.7 did, not at the first call.
    task_resources(app.roles[0], kubernetes=kfp_kubernetes() is not None)
    return cast(KFPContainerFactory, component)


def container_from_app(
    app: AppDef,
    *args: object,
    ui_metadata: Mapping[str, object] | None = None,
    **kwargs: object,
) -> Any:
    """``app`` as a task of the ``@dsl.pipeline`` being defined, with its resources and
    retries (``task_from_app``); keyword arguments are the component's inputs."""
    _no_ui_metadata(ui_metadata)
    return task_from_call("container_from_app", app, args, kwargs)


def component_spec_from_app(app: AppDef) -> tuple[str, Role]:
    """The YAML kfp v2 compiles ``app``'s component to, and the role it runs (whose
    resources are applied to each task, not written in the component)."""
    import importlib

    compiler: Any = importlib.import_module("kfp.compiler")
    component = _component(app)
    with tempfile.TemporaryDirectory(prefix="torchx_kfp_") as tmp:
        path = os.path.join(tmp, "component.yaml")
        compiler.Compiler().compile(component, path)
        with open(path, encoding="utf-8") as f:
            return f.read(), app.roles[0]


def resource_from_app(app: AppDef, queue: str, service_account: str | None = None) -> Any:
    """0.7 made a kfp v1 ``ResourceOp`` holding a Volcano job; kfp v2 has no ResourceOp.

    Raises ``KfpAdapterError``: run several replicas from a pipeline by submitting the app
    with torchx's kubernetes scheduler from a stage (``torchx run -s kubernetes ...``), or
    make a single-replica stage with ``container_from_app``.
    """
    raise KfpAdapterError(
        "resource_from_app",
        app.name,
        "kfp v2 has no ResourceOp for a Volcano job; submit the app with `torchx run -s "
        f"kubernetes -cfg queue={queue}` from a stage, or use container_from_app for one "
        "replica",
    )


__all__ = [
    "METADATA_FILE",
    "ContainerFactory",
    "KFPContainerFactory",
    "component_from_app",
    "component_spec_from_app",
    "container_from_app",
    "resource_from_app",
]
