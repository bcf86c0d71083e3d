"""Entry-point loading with pytorch/torchx's ``torchx.util.entrypoints`` names, for
plugins that register schedulers, components, named resources or trackers."""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from importlib.metadata import EntryPoint
from typing import Any


def load(group: str, name: str, default: Any = None) -> Any:
    """What entry point ``name`` of ``group`` names (a function, a class or a module).

    ``default`` when there is no such entry point and a default is given; otherwise a
    KeyError that lists the entry points the group has.
    """
    found = {ep.name: ep for ep in metadata.entry_points().select(group=group)}
    if name not in found:
        if default is not None:
            return default
        known = ", ".join(sorted(found)) or "none"
        raise KeyError(f"no entry point {name!r} in group {group!r}; it has: {known}")
    return found[name].load()


def _deferred(ep: EntryPoint) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        target = ep.load()
        # a module is returned as loaded; a function or class is called with the arguments
        return target if ep.attr is None else target(*args, **kwargs)

    return run


def load_group(
    group: str, default: dict[str, Any] | None = None
) -> dict[str, Callable[..., Any]] | None:
    """``{name: loader}`` for every entry point of ``group``; ``default`` if it has none.

    A loader imports its target only when called: ``load_group("g")["x"](arg)`` calls the
    function entry point ``x`` with ``arg``; a module entry point is just loaded.
    """
    found = list(metadata.entry_points().select(group=group))
    if not found:
        return default
    return {ep.name: _deferred(ep) for ep in found}


__all__ = ["load", "load_group"]
