"""Experiment tracking for torchx apps: what each run recorded, and where it came from.

Inside an app launched by torchx::

    from torchx.tracker import app_run_from_env

    run = app_run_from_env()                  # the run of this app (its handle is the id)
    run.add_metadata(lr=0.01, epochs=3)
    run.add_artifact("model", "/tmp/model.pt", {"format": "torchscript"})

Trackers are configured where the app is launched, in ``.torchxconfig``::

    [torchx:tracker]
    fsspec=fsspec

    [tracker:fsspec]
    config=/tmp/torchx_runs

and read back with ``torchx tracker list jobs`` and ``torchx tracker list metadata RUN_ID``.
Importing this package is cheap; fsspec and mlflow load with the trackers that use them.
"""

from ._app_run import AppRun, AppRunTrackableSource, app_run_from_env
from ._base import (
    Lineage,
    TrackerArtifact,
    TrackerBase,
    TrackerDescendant,
    TrackerSource,
    lineage_of,
)
from ._environ import (
    ENV_TORCHX_JOB_ID,
    ENV_TORCHX_PARENT_RUN_ID,
    ENV_TORCHX_TRACKERS,
    build_trackers,
    tracker_config_env_var_name,
    tracker_factory_env_var_name,
    trackers_from_environ,
)
from ._errors import (
    CorruptRecordError,
    InvalidRecordError,
    TrackerConfigError,
    TrackerError,
    UnreadRecordWarning,
)

__all__ = [
    "ENV_TORCHX_JOB_ID",
    "ENV_TORCHX_PARENT_RUN_ID",
    "ENV_TORCHX_TRACKERS",
    "AppRun",
    "AppRunTrackableSource",
    "CorruptRecordError",
    "InvalidRecordError",
    "Lineage",
    "TrackerArtifact",
    "TrackerBase",
    "TrackerConfigError",
    "TrackerDescendant",
    "TrackerError",
    "TrackerSource",
    "UnreadRecordWarning",
    "app_run_from_env",
    "build_trackers",
    "lineage_of",
    "tracker_config_env_var_name",
    "tracker_factory_env_var_name",
    "trackers_from_environ",
]

for _public in (
    AppRun,
    AppRunTrackableSource,
    CorruptRecordError,
    InvalidRecordError,
    Lineage,
    TrackerArtifact,
    TrackerBase,
    TrackerConfigError,
    TrackerDescendant,
    TrackerError,
    TrackerSource,
    UnreadRecordWarning,
):
    _public.__module__ = __name__
del _public
