"""The tracker API at the module path torchx 0.7 used (``torchx.tracker.api``).

Trackers are found through ``load_group`` and ``load_module`` as read from this module
when they are built, so code that patches them here (as 0.7's tests do) takes effect.
"""

from torchx.tracker import (
    ENV_TORCHX_JOB_ID,
    ENV_TORCHX_PARENT_RUN_ID,
    ENV_TORCHX_TRACKERS,
    AppRun,
    AppRunTrackableSource,
    Lineage,
    TrackerArtifact,
    TrackerBase,
    TrackerSource,
    build_trackers,
    tracker_config_env_var_name,
    trackers_from_environ,
)
from torchx.tracker._environ import load_group, load_module

__all__ = [
    "ENV_TORCHX_JOB_ID",
    "ENV_TORCHX_PARENT_RUN_ID",
    "ENV_TORCHX_TRACKERS",
    "AppRun",
    "AppRunTrackableSource",
    "Lineage",
    "TrackerArtifact",
    "TrackerBase",
    "TrackerSource",
    "build_trackers",
    "load_group",
    "load_module",
    "tracker_config_env_var_name",
    "trackers_from_environ",
]
