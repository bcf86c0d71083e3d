"""Run every component provider of a module on a scheduler and check that all succeed."""

from __future__ import annotations

import inspect
import logging
import sys
import types
from typing import TYPE_CHECKING, Any

from torchx.components.integration_tests.component_provider import ComponentProvider
from torchx.specs import AppState, AppStatus, CfgVal

if TYPE_CHECKING:
    from torchx.runner import Runner

log: logging.Logger = logging.getLogger(__name__)


def _runner(name: str) -> Runner:
    try:
        from torchx.runner import get_runner
    except ImportError as e:
        raise ImportError(
            "torchx.components.integration_tests needs torchx-runner: pip install torchx"
        ) from e
    return get_runner(name)


class IntegComponentTest:
    """Submits the apps of every concrete ComponentProvider in a module, waits for them,
    prints their logs and raises AssertionError naming how many did not succeed::

        from torchx.components.integration_tests import component_provider
        from torchx.components.integration_tests.integ_tests import IntegComponentTest

        IntegComponentTest().run_components(component_provider, "torchx:0.1", "local_cwd", {})
    """

    def run_components(
        self,
        module: types.ModuleType,
        image: str,
        scheduler: str,
        cfg: dict[str, CfgVal],
        dryrun: bool = False,
        workspace: str | None = None,
    ) -> None:
        providers = [cls(scheduler, image) for cls in self._get_component_providers(module)]
        apps = []
        for provider in providers:
            provider.setUp()
            try:
                apps.append(provider.get_app_def())
            finally:
                provider.tearDown()

        runner = _runner("test-runner")
        submitted: list[str] = []
        for app in apps:
            info = runner.dryrun(app, scheduler, cfg=cfg, workspace=workspace)
            log.info("scheduler request for %s:\n%s", app.name, info)
            if not dryrun:
                submitted.append(runner.schedule(info))
                log.info("submitted %s", submitted[-1])

        results: dict[str, AppStatus | None] = {
            h: runner.wait(h, wait_interval=1) for h in submitted
        }
        for handle, status in results.items():
            state = status.state.name if status is not None else "UNKNOWN"
            print(f"=== BEGIN LOG {handle} ({state}) ===")
            self._print_logs(runner, handle)
            print(f"=== END LOG {handle} ({state}) ===")
        failed = [h for h, s in results.items() if s is None or s.state != AppState.SUCCEEDED]
        if failed:
            raise AssertionError(
                f"{len(failed)}/{len(results)} test apps did not succeed: {', '.join(failed)}"
            )

    @staticmethod
    def _print_logs(runner: Runner, handle: str) -> None:
        app = runner.describe(handle)
        for role in app.roles if app is not None else []:
            for k in range(role.num_replicas):
                try:
                    for line in runner.log_lines(handle, role.name, k):
                        print(f"{role.name}/{k} {line}", end="" if line.endswith("\n") else "\n")
                except Exception as e:  # a scheduler without logs still gets its verdict
                    print(f"{role.name}/{k}: no logs ({e})", file=sys.stderr)

    def _get_component_providers(self, module: types.ModuleType) -> list[type[Any]]:
        """The concrete ComponentProvider classes defined or imported in ``module``."""
        return [
            attr
            for attr in vars(module).values()
            if inspect.isclass(attr)
            and issubclass(attr, ComponentProvider)
            and not inspect.isabstract(attr)
        ]


__all__ = ["IntegComponentTest"]
