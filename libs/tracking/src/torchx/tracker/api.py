"""The tracker API at the module path torchx 0.7 used (``torchx.tracker.api``)."""

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
    "tracker_config_env_var_name",
    "trackers_from_environ",
]
