"""A ``unittest.TestCase`` base for testing components, under pytorch/torchx's module path.

    from torchx.components.component_test_base import ComponentTestCase
    import my_components

    class MyComponentsTest(ComponentTestCase):
        def test_train(self) -> None:
            self.validate(my_components, "train")
            status = self.run_component(my_components.train, {"steps": 3}, timeout=60)
            assert status is not None and status.state == AppState.SUCCEEDED

``run_component`` launches the app with ``torchx.runner``, which this module needs
(``pip install torchx-runner``, or ``torchx``).
"""

from __future__ import annotations

import inspect
import os
import shutil
import tempfile
import types
import unittest
from collections.abc import Callable, Mapping
from typing import Any

from torchx.specs import AppDef, AppStatus, get_component_schema
from torchx.specs.file_linter import validate as lint


class ComponentTestCase(unittest.TestCase):
    """Helpers to check a component's definition and to run it to completion."""

    def setUp(self) -> None:
        # A scratch directory per test for the files a component writes.
        self.test_dir = tempfile.mkdtemp(prefix="torchx_component_test_")
        self.old_cwd = os.getcwd()

    def tearDown(self) -> None:
        os.chdir(self.old_cwd)
        shutil.rmtree(self.test_dir, ignore_errors=True)

    def validate(self, module: types.ModuleType, function_name: str) -> None:
        """Fail unless ``module.function_name`` is a component that ``torchx run`` accepts:
        the file passes the component linter and its ``--help`` can be built."""
        path = inspect.getsourcefile(module)
        self.assertIsNotNone(path, f"{module.__name__} has no source file")
        problems = lint(os.path.abspath(str(path)), function_name)
        self.assertEqual(
            [], [f"{path}:{p.line}: {p.description}" for p in problems], "component problems"
        )
        schema = get_component_schema(getattr(module, function_name), function_name)
        self.assertTrue(schema.help())

    def run_component(
        self,
        component: Callable[..., AppDef],
        args: Mapping[str, Any] | None = None,
        scheduler_params: Mapping[str, Any] | None = None,
        scheduler: str = "local_cwd",
        interval: float = 0.1,
        timeout: float = 1,
    ) -> AppStatus | None:
        """Call ``component(**args)``, run the app on ``scheduler`` and wait for it.

        Returns its status once it ends, or after ``timeout`` seconds (then possibly
        still RUNNING); the scheduler is polled at least every ``interval`` seconds.
        """
        try:
            from torchx.runner import get_runner
        except ModuleNotFoundError as e:  # pragma: no cover - depends on what is installed
            raise ModuleNotFoundError(
                "ComponentTestCase.run_component runs apps with torchx.runner; "
                "install torchx-runner (or torchx)"
            ) from e
        app = component(**dict(args or {}))
        with get_runner(**dict(scheduler_params or {})) as runner:
            handle = runner.run(app, scheduler)
            return runner.wait(handle, wait_interval=interval, timeout=timeout)


__all__ = ["ComponentTestCase"]
