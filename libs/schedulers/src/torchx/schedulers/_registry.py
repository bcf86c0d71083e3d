"""Scheduler names and how to build each scheduler, with nothing imported until used.

Built-in schedulers are listed below as ``module:factory``; any installed package can
add one through the ``torchx.schedulers`` entry-point group, whose entry points name a
factory ``(session_name: str, **params) -> Scheduler``.

A factory's named keyword parameters are the ones it declares (``state_dir`` for
local_cwd); ``declared_params`` reads them so that a Runner passes each scheduler only
its own. Built-in factories refuse any other parameter.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from torchx.schedulers._api import Scheduler
from torchx.schedulers._errors import UnknownSchedulerError

ENTRY_POINT_GROUP = "torchx.schedulers"
DEFAULT_SCHEDULER = "local_cwd"

# Implemented built-ins. A scheduler is added here only once it works.
_BUILTINS: dict[str, str] = {
    "local_cwd": "torchx.schedulers.local_scheduler:create_scheduler",
    "local_dir": "torchx.schedulers.local_scheduler:create_dir_scheduler",
    "local_docker": "torchx.schedulers.docker_scheduler:create_scheduler",
    "kubernetes": "torchx.schedulers.kubernetes_scheduler:create_scheduler",
    "slurm": "torchx.schedulers.slurm_scheduler:create_scheduler",
    "ray": "torchx.schedulers.ray_scheduler:create_scheduler",
}


# The module of each built-in scheduler (pytorch/torchx 0.7's name for this table).
DEFAULT_SCHEDULER_MODULES: Mapping[str, str] = {
    name: target.partition(":")[0] for name, target in _BUILTINS.items()
}


def get_default_scheduler_name() -> str:
    """The scheduler used when none is named: ``local_cwd``."""
    return DEFAULT_SCHEDULER


class SchedulerFactory(Protocol):
    def __call__(self, session_name: str, **params: Any) -> Scheduler[Any]: ...


def _entry_points() -> dict[str, str]:
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _targets() -> dict[str, str]:
    # A plugin adds names; it cannot replace a built-in scheduler.
    return {**_entry_points(), **_BUILTINS}


def _load(name: str, target: str) -> Callable[..., Any]:
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split(".") if attr else []:
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"scheduler {name!r}: {target} is not callable")
    return obj  # type: ignore[no-any-return]


def scheduler_names() -> list[str]:
    """Every scheduler that can be used now, built-in or installed, sorted."""
    return sorted(_targets())


class _LazyFactory:
    """A registered factory, imported on first call (or when its parameters are asked)."""

    def __init__(self, name: str, target: str) -> None:
        self.name = name
        self.target = target

    def load(self) -> Callable[..., Any]:
        return _load(self.name, self.target)

    def __call__(self, session_name: str, **params: Any) -> Scheduler[Any]:
        return self.load()(session_name, **params)  # type: ignore[no-any-return]


def _lazy_factory(name: str, target: str) -> SchedulerFactory:
    return _LazyFactory(name, target)


def declared_params(factory: Callable[..., Any]) -> frozenset[str] | None:
    """The keyword parameters ``factory`` declares by name, besides the session name.

    None means it declares none but takes ``**kwargs`` (as factories written for
    pytorch/torchx do): it is given every parameter and ignores what it does not use.
    """
    if isinstance(factory, _LazyFactory):
        factory = factory.load()
    try:
        params = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return None
    named = frozenset(
        p.name
        for p in params[1:]
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    )
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    return None if takes_any and not named else named


class _SchedulerFactories(Mapping[str, SchedulerFactory]):
    """Every scheduler by name. Looking up a built-in name reads no package metadata;
    only listing the names, or asking for one that is not built in, scans entry points."""

    def __getitem__(self, name: str) -> SchedulerFactory:
        if name in _BUILTINS:
            return _lazy_factory(name, _BUILTINS[name])
        targets = _targets()
        if name not in targets:
            raise KeyError(name)
        return _lazy_factory(name, targets[name])

    def __contains__(self, name: object) -> bool:
        return name in _BUILTINS or name in _targets()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(_targets()))

    def __len__(self) -> int:
        return len(_targets())


def get_scheduler_factories() -> Mapping[str, SchedulerFactory]:
    """A factory per scheduler name; each imports its scheduler only when called."""
    return _SchedulerFactories()


def _target_of(name: str) -> str:
    # Built-in names resolve without scanning installed distributions for entry points:
    # that scan costs tens of milliseconds on every CLI command.
    if isinstance(name, str) and name in _BUILTINS:
        return _BUILTINS[name]
    targets = _targets()
    if isinstance(name, str) and name in targets:
        return targets[name]
    raise UnknownSchedulerError(name, list(targets))


def get_scheduler(name: str, session_name: str = "torchx", **params: Any) -> Scheduler[Any]:
    """Build the scheduler called ``name``; an unknown name lists the known ones."""
    scheduler = _load(name, _target_of(name))(session_name, **params)
    if not isinstance(scheduler, Scheduler):
        raise TypeError(f"scheduler {name!r}: factory returned {type(scheduler).__name__}")
    return scheduler
