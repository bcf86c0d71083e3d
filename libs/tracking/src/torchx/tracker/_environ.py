"""How the runner tells an app which trackers to use: environment variables.

The runner sets, on every replica:

- ``TORCHX_JOB_ID``: the app's handle, which is the run id;
- ``TORCHX_TRACKERS``: tracker names, comma separated (``[torchx:tracker]`` keys);
- ``TORCHX_TRACKER_<NAME>_CONFIG``: the ``config`` of ``[tracker:<name>]``, if any;
- ``TORCHX_TRACKER_<NAME>_FACTORY``: the factory named in ``[torchx:tracker]`` when it
  differs from the name;
- ``TORCHX_PARENT_RUN_ID``: the run this one derives from, if any.

A factory is an entry point of the ``torchx.tracker`` group or ``module.path:function``;
it is called with the config (or None) and returns a :class:`TrackerBase`.
"""

from __future__ import annotations

import os
import sys

from ._base import TrackerBase
from ._errors import TrackerConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, NoReturn

ENV_TORCHX_TRACKERS = "TORCHX_TRACKERS"
ENV_TORCHX_PARENT_RUN_ID = "TORCHX_PARENT_RUN_ID"
ENV_TORCHX_JOB_ID = "TORCHX_JOB_ID"
# Set by the runner on every trial of a sweep (the sweep's handle, the trial's index and
# its arguments as a JSON object); a tracker may file the trial's run under the sweep.
ENV_TORCHX_SWEEP_ID = "TORCHX_SWEEP_ID"
ENV_TORCHX_SWEEP_INDEX = "TORCHX_SWEEP_INDEX"
ENV_TORCHX_SWEEP_ARGS = "TORCHX_SWEEP_ARGS"
ENTRY_POINT_GROUP = "torchx.tracker"


def tracker_config_env_var_name(entrypoint_key: str) -> str:
    """The variable that holds tracker ``entrypoint_key``'s config string."""
    return f"TORCHX_TRACKER_{entrypoint_key.upper()}_CONFIG"


def tracker_factory_env_var_name(name: str) -> str:
    """The variable that holds tracker ``name``'s factory, when it is not ``name`` itself."""
    return f"TORCHX_TRACKER_{name.upper()}_FACTORY"


def _tracker_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def load_group(
    group: str, default: Mapping[str, Callable[..., Any]] | None = None
) -> Mapping[str, Callable[..., Any]] | None:
    """The entry points of ``group`` as ``{name: loader}``; ``default`` when it has none.

    Calling a loader imports the entry point and calls it with the loader's arguments
    (an entry point naming a module is imported and returned).
    """
    from importlib.metadata import EntryPoint, entry_points

    def deferred(entry_point: EntryPoint) -> Callable[..., Any]:
        def load_and_call(*args: Any, **kwargs: Any) -> Any:
            loaded = entry_point.load()
            return loaded if entry_point.attr is None else loaded(*args, **kwargs)

        return load_and_call

    found = {ep.name: deferred(ep) for ep in entry_points(group=group)}
    return found or (dict(default) if default is not None else None)


def load_module(path: str) -> Any:
    """``module.path:attribute`` (or a module path): the object it names, None if missing."""
    import importlib

    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return getattr(module, attr, None) if attr else module


def _hooks() -> Any:
    # 0.7's users patch ``torchx.tracker.api.load_group``/``load_module``; look them up
    # there at call time when that module is loaded so the patch takes effect.
    return sys.modules.get("torchx.tracker.api") or sys.modules[__name__]


def _load_factory(name: str, factory: str) -> Callable[[str | None], TrackerBase]:
    """``factory``: an entry point name, ``module:function``, or a module path."""
    hooks = _hooks()
    if ":" not in factory:
        group = hooks.load_group(ENTRY_POINT_GROUP) or {}
        if factory in group:
            from_group: Callable[[str | None], TrackerBase] = group[factory]
            return from_group
    found = hooks.load_module(factory)
    if callable(found):
        return found  # type: ignore[no-any-return]
    return _explain_unloadable(name, factory)


def _explain_unloadable(name: str, factory: str) -> NoReturn:
    import importlib

    module_name, _, attr = factory.partition(":")
    try:
        importlib.import_module(module_name)
    except ImportError as e:
        raise TrackerConfigError(
            f"tracker {name!r} factory",
            factory,
            f"no '{ENTRY_POINT_GROUP}' entry point and no importable module of that name ({e});"
            " install the package that provides it in the app's environment or name it"
            " as module.path:function",
        ) from None
    if not attr:
        raise TrackerConfigError(
            f"tracker {name!r} factory",
            factory,
            "name the function too: module.path:function",
        )
    raise TrackerConfigError(
        f"tracker {name!r} factory", factory, f"module {module_name} has no function {attr!r}"
    )


def _check_takes_config(name: str, factory: str, make: Callable[..., Any]) -> None:
    """A factory that cannot be called with the config alone is the config's error (the
    call's own TypeError would name neither the tracker nor the fix)."""
    import inspect

    try:
        inspect.signature(make).bind(None)
    except ValueError:  # no signature to check (some builtins): the call will tell
        return
    except TypeError:
        raise TrackerConfigError(
            f"tracker {name!r} factory",
            factory,
            f"it takes {inspect.signature(make)}; name a function that takes one argument,"
            " the tracker's config string (None when unset), and returns a TrackerBase",
        ) from None


def build_trackers(factory_and_config: Mapping[str, str | None]) -> list[TrackerBase]:
    """One tracker per ``{factory: config}`` entry, built by calling the factory with config."""
    from collections.abc import Mapping  # here: importing torchx.tracker stays light

    if not isinstance(factory_and_config, Mapping):
        raise TrackerConfigError(
            "build_trackers factory_and_config",
            factory_and_config,
            "give a dict of factory -> config, e.g. {'fsspec': '/tmp/torchx_runs'}",
        )
    return [_build(name, name, config) for name, config in factory_and_config.items()]


def _build(name: str, factory: str, config: str | None) -> TrackerBase:
    make = _load_factory(name, factory)
    _check_takes_config(name, factory, make)
    tracker = make(config)
    if not isinstance(tracker, TrackerBase):
        raise TrackerConfigError(
            f"tracker {name!r} factory",
            factory,
            f"it returned {type(tracker).__name__}, not a torchx.tracker.TrackerBase",
        )
    return tracker


def trackers_from_environ(environ: Mapping[str, str] | None = None) -> list[TrackerBase]:
    """The trackers ``TORCHX_TRACKERS`` and its companion variables name (none if unset)."""
    env = os.environ if environ is None else environ
    trackers = []
    for name in _tracker_names(env.get(ENV_TORCHX_TRACKERS, "")):
        factory = env.get(tracker_factory_env_var_name(name)) or name
        config = env.get(tracker_config_env_var_name(name))
        trackers.append(_build(name, factory, config))
    return trackers
