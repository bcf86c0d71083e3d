"""What the runner tells every replica about experiment tracking, as environment variables.

The app side (``torchx.tracker.AppRun.run_from_env``) reads them; the names and their
meaning are those of torchx 0.7, so apps built against either side work with the other:

- ``TORCHX_JOB_ID``: the app's handle (``SCHEDULER://SESSION/APP_ID``), the run id;
- ``TORCHX_TRACKERS``: the tracker names of ``[torchx:tracker]``, comma separated;
- ``TORCHX_TRACKER_<NAME>_CONFIG``: ``config`` of ``[tracker:<name>]``;
- ``TORCHX_TRACKER_<NAME>_FACTORY``: the factory ``[torchx:tracker]`` names, when it is
  not the tracker name itself (``mlflow=torchx.tracker.mlflow:create_tracker``);
- ``TORCHX_PARENT_RUN_ID``: the run this one derives from.

In the launcher's own environment, ``TORCHX_TRACKERS``, ``TORCHX_TRACKER_<NAME>_CONFIG``
and ``TORCHX_PARENT_RUN_ID`` override the config files (a pipeline step passes them on).
The variable names are repeated here rather than imported: the runner does not depend
on the tracking library, and a test checks both spell them alike.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping

from torchx.specs import AppDef, SpecsError, macros, make_app_handle

ENV_TORCHX_JOB_ID = "TORCHX_JOB_ID"
ENV_TORCHX_TRACKERS = "TORCHX_TRACKERS"
ENV_TORCHX_PARENT_RUN_ID = "TORCHX_PARENT_RUN_ID"
TRACKER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
TRACKER_NAME_RULE = "tracker names are letters, digits and '_' (they name environment variables)"


def tracker_config_env_var_name(name: str) -> str:
    return f"TORCHX_TRACKER_{name.upper()}_CONFIG"


def tracker_factory_env_var_name(name: str) -> str:
    return f"TORCHX_TRACKER_{name.upper()}_FACTORY"


def trackers_env(trackers: Mapping[str, tuple[str, str | None]]) -> dict[str, str]:
    """``TORCHX_TRACKERS`` and each tracker's config and factory variables (none if no
    tracker is configured)."""
    configured = dict(trackers)
    names = list(configured)
    if os.environ.get(ENV_TORCHX_TRACKERS):
        names = [n.strip() for n in os.environ[ENV_TORCHX_TRACKERS].split(",") if n.strip()]
        for name in names:
            if not TRACKER_NAME.match(name):
                raise SpecsError(
                    ENV_TORCHX_TRACKERS, os.environ[ENV_TORCHX_TRACKERS], TRACKER_NAME_RULE
                )
    if not names:
        return {}
    env = {ENV_TORCHX_TRACKERS: ",".join(names)}
    for name in names:
        factory, config = configured.get(name, (name, None))
        config = os.environ.get(tracker_config_env_var_name(name), config)
        if config:
            env[tracker_config_env_var_name(name)] = config
        if factory != name:
            env[tracker_factory_env_var_name(name)] = factory
    return env


def tracker_env(
    trackers: Mapping[str, tuple[str, str | None]],
    scheduler: str,
    session: str,
    parent_run_id: str | None,
) -> dict[str, str]:
    """The variables to set on every role (``${app_id}`` is filled in by the scheduler)."""
    env = {ENV_TORCHX_JOB_ID: make_app_handle(scheduler, session, macros.app_id)}
    parent = parent_run_id or os.environ.get(ENV_TORCHX_PARENT_RUN_ID)
    if parent:
        env[ENV_TORCHX_PARENT_RUN_ID] = parent
    env.update(trackers_env(trackers))
    return env


def with_env(app: AppDef, env: Mapping[str, str]) -> AppDef:
    """A copy of ``app`` whose roles also carry ``env``; the caller's AppDef is untouched."""
    roles = [dataclasses.replace(role, env={**role.env, **env}) for role in app.roles]
    return dataclasses.replace(app, roles=roles)
