"""0.7's ``component_from_app`` factory as a kfp v2 component; imports kfp when built."""

from __future__ import annotations

import functools
import importlib
from typing import Any

from torchx.pipelines.kfp._component import component_from_plan
from torchx.pipelines.kfp._plan import plan_stage
from torchx.pipelines.kfp._task import task_from_call
from torchx.specs import AppDef


@functools.cache
def _app_component_class() -> type[Any]:
    # Made on first use, so that importing the adapter does not import kfp.
    base: type[Any] = importlib.import_module("kfp.components").ContainerComponent

    class AppComponent(base):  # type: ignore[misc]
        """The app's kfp container component: kfp compiles and uploads it like any other.

        kfp v2 keeps cpu, memory, accelerator and retries on the task, not the component,
        so calling it (inside a pipeline, inputs by name) goes through ``task_from_app``,
        which sets them, where kfp's own call would drop them.
        """

        def __init__(self, app: AppDef) -> None:
            # planned once: each call makes its task from this plan
            self._plan = plan_stage(app)
            component = component_from_plan(self._plan)
            super().__init__(component.component_spec, component.pipeline_func)
            self.app = app

        def __call__(self, *args: object, **kwargs: object) -> Any:
            return task_from_call("component_from_app(app)(...)", self._plan, args, kwargs)

    return AppComponent


def app_component(app: AppDef) -> Any:
    """``app`` as a kfp ``ContainerComponent`` whose call applies the role's settings."""
    return _app_component_class()(app)
