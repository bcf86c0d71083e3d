"""What one ``torchx run`` reads at most once: its config files, ``[cli:run]`` and its runner.

Its own module so that the modules of ``torchx run`` (the component reader, the sweep
command) can take it without importing the command itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchx.runner import Runner, TorchxConfig


class RunSetup:
    """The config files, ``[cli:run]`` and the runner of one ``torchx run``, each made once
    and only when first needed: ``torchx run COMPONENT --help`` needs none of them, a bare
    ``torchx run`` the config alone (to see whether it names a component)."""

    def __init__(self, make_runner: Callable[[TorchxConfig], Runner]) -> None:
        self._make_runner = make_runner

    @functools.cached_property
    def config(self) -> TorchxConfig:
        from torchx.runner import load_config, scheduler_factories

        return load_config(known_schedulers=scheduler_factories())

    @functools.cached_property
    def runner(self) -> Runner:
        return self._make_runner(self.config)

    @functools.cached_property
    def defaults(self) -> dict[str, str]:
        return self.config.cli_defaults("run")
