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

from ._base import TrackerBase
from ._errors import TrackerConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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


def _load_factory(name: str, factory: str) -> Callable[[str | None], TrackerBase]:
    """``factory``: ``module:function``, an entry point name, or a module path."""
    import importlib

    if ":" not in factory:
        from importlib.metadata import entry_points

        for entry_point in entry_points(group=ENTRY_POINT_GROUP, name=factory):
            loaded: Callable[[str | None], TrackerBase] = entry_point.load()
            return loaded
    module_name, _, attr = factory.partition(":")
    try:
        module = importlib.import_module(module_name)
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
    found = getattr(module, attr, None)
    if not callable(found):
        raise TrackerConfigError(
            f"tracker {name!r} factory", factory, f"module {module_name} has no function {attr!r}"
        )
    return found  # type: ignore[no-any-return]


def build_trackers(factory_and_config: Mapping[str, str | None]) -> list[TrackerBase]:
    """One tracker per ``{factory: config}`` entry, built by calling the factory with config."""
    return [_build(name, name, config) for name, config in factory_and_config.items()]


def _build(name: str, factory: str, config: str | None) -> TrackerBase:
    tracker = _load_factory(name, factory)(config)
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
