"""Scheduler names and how to build each scheduler, with nothing imported until used.

Built-in schedulers are listed below as ``module:factory``; any installed package can
add (or replace) one through the ``torchx.schedulers`` entry-point group, whose entry
points name a factory ``(session_name: str, **params) -> Scheduler``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from torchx.schedulers._api import Scheduler, SchedulerCapabilities
from torchx.schedulers._errors import UnknownSchedulerError

ENTRY_POINT_GROUP = "torchx.schedulers"
DEFAULT_SCHEDULER = "local_cwd"

# Implemented built-ins. A scheduler is added here only once it works.
_BUILTINS: dict[str, str] = {
    "local_cwd": "torchx.schedulers.local_scheduler:create_scheduler",
    "local_docker": "torchx.schedulers.docker_scheduler:create_scheduler",
    "kubernetes": "torchx.schedulers.kubernetes_scheduler:create_scheduler",
    "slurm": "torchx.schedulers.slurm_scheduler:create_scheduler",
    "ray": "torchx.schedulers.ray_scheduler:create_scheduler",
}
# Names kept for schedulers that later releases provide; asking for one says so.
RESERVED_NAMES: tuple[str, ...] = ()


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


def _lazy_factory(name: str, target: str) -> SchedulerFactory:
    def factory(session_name: str, **params: Any) -> Scheduler[Any]:
        return _load(name, target)(session_name, **params)  # type: ignore[no-any-return]

    return factory


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
    reason = ""
    if name in RESERVED_NAMES:
        reason = f"{name!r} is not available in this version of torchx-schedulers; "
    raise UnknownSchedulerError(name, list(targets), reason)


def get_scheduler(name: str, session_name: str = "torchx", **params: Any) -> Scheduler[Any]:
    """Build the scheduler called ``name``; an unknown name lists the known ones."""
    scheduler = _load(name, _target_of(name))(session_name, **params)
    if not isinstance(scheduler, Scheduler):
        raise TypeError(f"scheduler {name!r}: factory returned {type(scheduler).__name__}")
    return scheduler


def scheduler_class(name: str) -> type[Scheduler[Any]]:
    """The class a factory builds, found without building it (for the capability table).

    A factory may expose it as ``factory.scheduler_class``; otherwise the factory's module
    is expected to define exactly one Scheduler subclass.
    """
    target = _target_of(name)
    factory = _load(name, target)
    cls = getattr(factory, "scheduler_class", None)
    if isinstance(cls, type) and issubclass(cls, Scheduler):
        return cls
    module = importlib.import_module(target.partition(":")[0])
    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Scheduler) and v.__module__ == module.__name__
    ]
    if len(found) != 1:
        raise TypeError(f"scheduler {name!r}: cannot tell its class; set factory.scheduler_class")
    return found[0]


def capabilities(name: str) -> SchedulerCapabilities:
    return scheduler_class(name).capabilities


def capability_table() -> dict[str, SchedulerCapabilities]:
    """Capabilities of every usable scheduler, by name (what ``torchx schedulers`` shows)."""
    return {name: capabilities(name) for name in scheduler_names()}
