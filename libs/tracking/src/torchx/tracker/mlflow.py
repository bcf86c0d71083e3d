"""MLflowTracker: torchx runs as MLflow runs (install ``torchx-tracking[mlflow]``).

A torchx run id (the app handle) is the MLflow *run name*; the runs live in one MLflow
experiment. What torchx records maps onto MLflow as:

- metadata: run tags (MLflow keeps tag values as text; non-str values are stored as
  JSON text and read back as that text);
- artifacts: a local file or folder is uploaded to the run's artifacts under the
  artifact's name; anything else (an ``s3://`` URL) is kept as a reference. Either way
  a ``torchx.artifact.<name>`` tag holds the record (path and metadata) as JSON;
- sources: ``torchx.source.<digest>`` tags, one per source and artifact;
- numbers in metadata (``objective=0.02``) are also logged as metrics (step 0), which
  MLflow's UI compares and plots across runs.

A trial of a sweep (``TORCHX_SWEEP_ID`` set by the runner) is a child run of one run
named by the sweep's handle (MLflow's ``mlflow.parentRunId`` tag, so the UI nests it),
with its sweep arguments as params.

Replicas of one app start together and all ask for the run of one name: finding or
creating it (and the experiment) happens under a lock per store, so they land in one
run; a run is never deleted, and reads merge every run of the name (see _store_lock).

mlflow is imported when the first tracker is created, never by ``import torchx.tracker``.
The MLflow client API is used per run (not mlflow's process-wide "active run"), so one
process may write to several runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from torchx.runtime.tracking._document import decode_object

from ._base import TrackerArtifact, TrackerSource
from ._config_file import read_config_file
from ._environ import (
    ENV_TORCHX_JOB_ID,
    ENV_TORCHX_SWEEP_ARGS,
    ENV_TORCHX_SWEEP_ID,
    ENV_TORCHX_SWEEP_INDEX,
)
from ._errors import InvalidRecordError, TrackerConfigError, UnreadRecordWarning, warn_unread
from ._reachable import check_server_reachable as _check_server_reachable
from ._records import CheckedTracker, stored_artifact, stored_source
from ._store_lock import store_lock, store_setup_lock

TAG_ARTIFACT_MD_PREFIX = "torchx.artifact.metadata"
"""Prefix of the tags torchx 0.7 used for artifact metadata (kept for reference)."""
ARTIFACT_TAG = "torchx.artifact."
SOURCE_TAG = "torchx.source."
PARENT_RUN_TAG = "mlflow.parentRunId"
SWEEP_TAG = "torchx.sweep"
SWEEP_INDEX_TAG = "torchx.sweep_index"
EXPERIMENT_ENV = "TORCHX_TRACKING_EXPERIMENT_NAME"
CONFIG_SECTION = "tracker:mlflow"
_TAG_NAME = re.compile(r"^[\w\-. /]+$")
_T = TypeVar("_T")


def default_tracking_uri() -> str:
    import tempfile

    return f"file://{os.path.join(tempfile.gettempdir(), 'torchx', 'mlruns')}"


def _import_mlflow() -> Any:
    try:
        import mlflow  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise TrackerConfigError(
            "mlflow", None, "the MLflow tracker needs mlflow: pip install 'torchx-tracking[mlflow]'"
        ) from None
    return mlflow


def _is_file_store(uri: str) -> bool:
    return uri.startswith("file:") or ("://" not in uri and not uri.startswith("sqlite:"))


def _tag_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class MLflowTracker(CheckedTracker):
    """Records torchx runs in MLflow experiment ``experiment_name`` at ``tracking_uri``.

    ``experiment_name`` defaults to ``default-experiment/<user>/<host>`` and is created
    if missing; ``tracking_uri`` is any MLflow tracking URI (``http://host:5000``,
    ``sqlite:///mlflow.db``, ``file:///path/mlruns``; default a ``mlruns`` folder in the
    temporary directory). MLflow refuses its file store unless
    ``MLFLOW_ALLOW_FILE_STORE`` is set; for a ``file:`` URI given here this tracker
    sets it (when unset), since the URI is the user's explicit choice.
    """

    def __init__(
        self,
        experiment_name: str | None = None,
        tracking_uri: str | None = None,
        artifact_location: str | None = None,
    ) -> None:
        self.tracking_uri = tracking_uri or default_tracking_uri()
        if _is_file_store(self.tracking_uri):
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        mlflow = _import_mlflow()
        _check_server_reachable(self.tracking_uri)
        self._mlflow = mlflow
        name = experiment_name or self.default_experiment_name()
        # Opening a store sets up a new one (a file store's folders, a SQLite database's
        # tables): replicas starting together must not do that twice either.
        with store_setup_lock(self.tracking_uri):
            try:
                self.client = mlflow.MlflowClient(self.tracking_uri)
            except mlflow.exceptions.MlflowException as e:
                # MLflow's own message is several sentences and a link: keep the first
                reason = str(e.message).strip().split(". ")[0].strip()
                raise TrackerConfigError(
                    "mlflow tracking_uri",
                    self.tracking_uri,
                    f"MLflow cannot use it ({reason}); give an http(s)://, sqlite:///,"
                    " postgresql:// or file:/// URI",
                ) from None
        with store_lock(self.tracking_uri):
            same_named = self._experiments_named(name)
            if not same_named:
                same_named = [self._create_experiment(name, artifact_location)]
        self.experiment = same_named[0]
        # Stores written before this lock existed may hold one name twice: read them all.
        self._experiment_ids = [str(e.experiment_id) for e in same_named]
        self._run_ids: dict[str, str] = {}
        run_name = os.environ.get(ENV_TORCHX_JOB_ID)
        if run_name:
            self.get_run_id(run_name)

    @staticmethod
    def default_experiment_name() -> str:
        import getpass
        import socket

        return f"default-experiment/{getpass.getuser()}/{socket.getfqdn()}"

    def _experiments_named(self, name: str) -> list[Any]:
        """The active experiments called ``name``, oldest first (one, but for old stores)."""
        quoted = name.replace("\\", "\\\\").replace("'", "\\'")
        found = self.client.search_experiments(filter_string=f"name = '{quoted}'")
        same = [e for e in found if e.name == name]
        return sorted(same, key=lambda e: (e.creation_time or 0, str(e.experiment_id)))

    def _create_experiment(self, name: str, artifact_location: str | None) -> Any:
        try:
            experiment_id = self.client.create_experiment(name, artifact_location)
        except self._mlflow.exceptions.MlflowException:
            # A tracking server on another host created it first (its names are unique).
            found = self._experiments_named(name)
            if not found:
                raise
            return found[0]
        return self.client.get_experiment(experiment_id)

    @property
    def experiment_id(self) -> str:
        return str(self.experiment.experiment_id)

    @property
    def experiment_name(self) -> str:
        return str(self.experiment.name)

    @property
    def artifact_location(self) -> str:
        return str(self.experiment.artifact_location)

    def __repr__(self) -> str:
        return (
            f"MLflowTracker(experiment_name={self.experiment_name!r},"
            f" tracking_uri={self.tracking_uri!r})"
        )

    # -- runs by name ---------------------------------------------------------------

    def _runs_named(self, run_name: str) -> list[Any]:
        quoted = run_name.replace("\\", "\\\\").replace("'", "\\'")
        runs = self.client.search_runs(
            self._experiment_ids,
            filter_string=f"attributes.run_name = '{quoted}'",
            max_results=1000,
        )
        # Oldest first: where a store holds one name twice, writers pick the same run.
        return sorted(runs, key=lambda r: (r.info.start_time, r.info.run_id))

    def get_run_id(self, run_name: str) -> str:
        """The MLflow run id of torchx run ``run_name``, creating the run if needed.

        Replicas of one app ask at the same moment: the store's lock makes the first
        create the run and the others find it. The run of this app's own job
        (``TORCHX_JOB_ID``) in a sweep is created as a child of the sweep's run.
        """
        cached = self._run_ids.get(run_name)
        if cached is not None:
            return cached
        with store_lock(self.tracking_uri):
            sweep = _sweep_trial(run_name)
            if sweep is None:
                run_id = self._find_or_create(run_name, {})
            else:
                handle, index, args = sweep
                parent = self._find_or_create(handle, {SWEEP_TAG: "true"})
                tags = {PARENT_RUN_TAG: parent, SWEEP_INDEX_TAG: index}
                run_id = self._find_or_create(run_name, tags, args)
        self._run_ids[run_name] = run_id
        return run_id

    def _find_or_create(
        self, run_name: str, tags: Mapping[str, str], params: Mapping[str, str] | None = None
    ) -> str:
        """The oldest run called ``run_name``, or a new one with ``tags`` and ``params``;
        called with the store's lock held."""
        runs = self._runs_named(run_name)
        if runs:
            return str(runs[0].info.run_id)
        created = self.client.create_run(self.experiment_id, run_name=run_name, tags=dict(tags))
        run_id = str(created.info.run_id)
        if params:
            from mlflow.entities import Param  # type: ignore[import-untyped,import-not-found,unused-ignore]

            self.client.log_batch(run_id, params=[Param(k, v) for k, v in params.items()])
        return run_id

    def get_run(self, run_name: str) -> Any:
        """MLflow's ``Run`` for torchx run ``run_name`` (created if missing)."""
        return self.client.get_run(self.get_run_id(run_name))

    def _tags(self, run_name: str) -> dict[str, str]:
        """Tags of every run named ``run_name``, merged (no run: no tags)."""
        tags: dict[str, str] = {}
        for run in self._runs_named(run_name):
            tags.update(run.data.tags)
        return tags

    def close(self) -> None:
        """Mark the runs this tracker wrote to as finished."""
        for run_id in self._run_ids.values():
            with self._file_store_lock():
                self.client.set_terminated(run_id)

    def _file_store_lock(self) -> Any:
        """The store's lock where MLflow's file store needs it for writes too: it makes a
        tag's folder with check-then-mkdir and rewrites ``meta.yaml`` in place."""
        import contextlib

        if _is_file_store(self.tracking_uri):
            return store_lock(self.tracking_uri)
        return contextlib.nullcontext()

    # -- TrackerBase ----------------------------------------------------------------

    def _set_tags(
        self, run_name: str, tags: Mapping[str, str], metrics: Mapping[str, float] | None = None
    ) -> None:
        import time

        from mlflow.entities import Metric, RunTag  # type: ignore[import-untyped,import-not-found,unused-ignore]

        run_id = self.get_run_id(run_name)
        now = int(time.time() * 1000)
        with self._file_store_lock():
            self.client.log_batch(
                run_id,
                metrics=[Metric(k, v, now, 0) for k, v in (metrics or {}).items()],
                tags=[RunTag(k, v) for k, v in tags.items()],
            )

    def _store_metadata(self, run_id: str, metadata: dict[str, object]) -> None:
        for key in metadata:
            _check_tag_name("metadata key", key)
        numbers = {
            k: float(v)
            for k, v in metadata.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        self._set_tags(run_id, {k: _tag_text(v) for k, v in metadata.items()}, numbers)

    def metadata(self, run_id: str) -> dict[str, object]:
        """The run's tags, less MLflow's own (``mlflow.*``) and torchx's (``torchx.*``)."""
        return {
            k: v for k, v in self._tags(run_id).items() if not k.startswith(("mlflow.", "torchx."))
        }

    def _store_artifact(self, run_id: str, artifact: TrackerArtifact) -> None:
        name, path = artifact.name, artifact.path
        _check_tag_name("artifact name", name)
        mlflow_run_id = self.get_run_id(run_id)
        stored = path
        if os.path.isfile(path) or os.path.isdir(path):
            artifact_uri = self.client.get_run(mlflow_run_id).info.artifact_uri
            with self._file_store_lock():
                if os.path.isfile(path):
                    self.client.log_artifact(mlflow_run_id, path, artifact_path=name)
                    stored = f"{artifact_uri}/{name}/{os.path.basename(path)}"
                else:
                    self.client.log_artifacts(mlflow_run_id, path, artifact_path=name)
                    stored = f"{artifact_uri}/{name}"
        record = {"version": 1, "path": stored, "source_path": path, "metadata": artifact.metadata}
        self._set_tags(run_id, {ARTIFACT_TAG + name: json.dumps(record)})

    def artifacts(self, run_id: str) -> dict[str, TrackerArtifact]:
        found: dict[str, TrackerArtifact] = {}
        tags = {
            key: value
            for key, value in self._tags(run_id).items()
            if not key.startswith(TAG_ARTIFACT_MD_PREFIX + ".")
        }
        for artifact in _tag_values(tags, ARTIFACT_TAG, self._where(run_id), stored_artifact):
            found[artifact.name] = artifact
        return found

    def _where(self, run_name: str) -> str:
        """Where a run's tags are, as a skipped record's warning names them."""
        return f"{self.tracking_uri} run {run_name}"

    def _store_source(self, run_id: str, source: TrackerSource) -> None:
        identity = json.dumps([source.source_run_id, source.artifact_name])
        digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
        self._set_tags(run_id, {SOURCE_TAG + digest: json.dumps(source.to_dict())})

    def sources(self, run_id: str, artifact_name: str | None = None) -> list[TrackerSource]:
        return _sources_in(self._tags(run_id), artifact_name, self._where(run_id))

    def run_ids(self, **kwargs: str) -> list[str]:
        """Run names in the experiment (or in ``experiment=NAME``), sorted; with
        ``parent_run_id``, only the runs that name it as a source."""
        parent, experiment = self._run_filters(kwargs)
        experiment_ids = self._experiment_ids
        if experiment:
            experiment_ids = [str(e.experiment_id) for e in self._experiments_named(experiment)]
            if not experiment_ids:
                return []
        runs = self.client.search_runs(experiment_ids, max_results=50000)
        names = set()
        for run in runs:
            if parent is not None and not any(
                s.source_run_id == parent
                for s in _sources_in(run.data.tags, None, self._where(run.info.run_name))
            ):
                continue
            names.add(run.info.run_name)
        return sorted(names)

    def experiments(self) -> list[str]:
        return sorted(e.name for e in self.client.search_experiments())

    def log_params_flat(self, run_name: str, cfg: Any, key: str = "") -> None:
        """Log ``cfg`` (a dataclass, mapping or sequence) as MLflow params, nested keys
        joined with '.', items of sequences of non-scalars as ``_<index>``."""
        import dataclasses

        if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
            cfg = dataclasses.asdict(cfg)
        run_id = self.get_run_id(run_name)
        prefix = f"{key}." if key else ""
        scalar = (str, int, float, bool)

        def log_param(name: str, value: object) -> None:
            with self._file_store_lock():
                self.client.log_param(run_id, name, value)

        if not cfg or isinstance(cfg, scalar):
            log_param(key, cfg)
        elif isinstance(cfg, Mapping):
            for k, v in cfg.items():
                if isinstance(v, scalar):
                    log_param(f"{prefix}{k}", v)
                else:
                    self.log_params_flat(run_name, v, f"{prefix}{k}")
        elif isinstance(cfg, Iterable):
            items = list(cfg)
            if isinstance(items[0], scalar):
                log_param(key, items)
            else:
                for i, item in enumerate(items):
                    self.log_params_flat(run_name, item, f"{prefix}_{i}")


def _sweep_trial(run_name: str) -> tuple[str, str, dict[str, str]] | None:
    """``(sweep handle, trial index, trial arguments)`` when ``run_name`` is this process's
    own job and the runner launched it as a trial of a sweep; else None."""
    sweep = os.environ.get(ENV_TORCHX_SWEEP_ID)
    if not sweep or run_name != os.environ.get(ENV_TORCHX_JOB_ID) or run_name == sweep:
        return None
    try:
        args = json.loads(os.environ.get(ENV_TORCHX_SWEEP_ARGS) or "{}")
    except ValueError:
        args = None
    if not isinstance(args, dict):
        raise TrackerConfigError(
            ENV_TORCHX_SWEEP_ARGS,
            os.environ.get(ENV_TORCHX_SWEEP_ARGS),
            "the runner sets it to a JSON object of the trial's arguments; unset it or fix it",
        )
    index = os.environ.get(ENV_TORCHX_SWEEP_INDEX, "")
    return sweep, index, {str(k): str(v) for k, v in args.items()}


def _sources_in(
    tags: Mapping[str, str], artifact_name: str | None, where: str
) -> list[TrackerSource]:
    return [
        source
        for source in _tag_values(
            tags, SOURCE_TAG, where, lambda tag, _, record, fix: stored_source(tag, record, fix)
        )
        if artifact_name is None or source.artifact_name == artifact_name
    ]


def _tag_values(
    tags: Mapping[str, str],
    prefix: str,
    where: str,
    stored: Callable[[str, str, dict[str, Any], str], _T | UnreadRecordWarning],
) -> Iterator[_T]:
    """What ``stored(tag, name, record, fix)`` reads from each tag under ``prefix``,
    sorted (``tag`` names it for a warning, ``name`` is its key after ``prefix``); a tag
    that holds no JSON object, or none ``stored`` reads (edited by hand, say), is skipped
    with a warning naming it, as the fsspec tracker skips a damaged record, so that it
    costs the reader that tag only."""
    for key, value in sorted(tags.items()):
        if not key.startswith(prefix):
            continue
        tag = f"{where} tag {key}"
        try:
            record = decode_object(value.encode("utf-8"), "a JSON object (a tracker record)")
        except ValueError as e:
            # warned outside the except: nothing to chain
            read: _T | UnreadRecordWarning = UnreadRecordWarning(tag, f"{e}; {_FIX}")
        else:
            read = stored(tag, key[len(prefix) :], record, _FIX)
        if isinstance(read, UnreadRecordWarning):
            warn_unread(read)
        else:
            yield read


# how to read a run without a tag torchx cannot read, for its warning to name
_FIX = (
    "record it again (add_artifact, add_source), or delete the tag (MLflow's UI, or"
    " MlflowClient.delete_tag), to read the run without it"
)


def _check_tag_name(field: str, name: str) -> None:
    if not _TAG_NAME.match(name) or ".." in name or name.startswith("/"):
        raise InvalidRecordError(
            field, name, "MLflow names take letters, digits, '_', '-', '.', ' ' and '/'"
        )


def _read_section(config: str) -> dict[str, str]:
    """``[tracker:mlflow]`` of the INI file ``config``, or of ``config/.torchxconfig``."""
    import configparser

    import fsspec  # type: ignore[import-untyped]

    path = os.path.join(config, ".torchxconfig") if os.path.isdir(config) else config
    text = read_config_file(
        fsspec.filesystem("file"),
        path,
        "mlflow tracker config",
        config,
        "give a tracking URI, or a .torchxconfig (or its folder) with a [tracker:mlflow] section",
    )
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as e:
        why = "; ".join(line.strip() for line in str(e).splitlines())  # one line
        raise TrackerConfigError(
            "mlflow tracker config", config, f"cannot read it as a .torchxconfig file ({why})"
        ) from None
    return dict(parser[CONFIG_SECTION]) if parser.has_section(CONFIG_SECTION) else {}


def create_tracker(config: str | None) -> MLflowTracker:
    """The ``mlflow`` tracker factory.

    ``config`` is a tracking URI (``http://127.0.0.1:5000``, ``sqlite:///m.db``,
    ``file:///tmp/mlruns``), or, as in torchx 0.7, a folder holding a ``.torchxconfig``
    (or that file itself) whose ``[tracker:mlflow]`` section gives ``experiment_name``,
    ``tracking_uri`` and ``artifact_location``. ``TORCHX_TRACKING_EXPERIMENT_NAME``, when
    set, names the experiment.
    """
    options: dict[str, str] = {}
    if config and (os.path.isdir(config) or os.path.isfile(config)):
        options = _read_section(config)
        options.pop("config", None)
    elif config:
        options = {"tracking_uri": config}
    known = {"experiment_name", "tracking_uri", "artifact_location"}
    for key in options:
        if key not in known:
            raise TrackerConfigError(
                f"[{CONFIG_SECTION}] {key}", options[key], f"known keys: {', '.join(sorted(known))}"
            )
    experiment = os.environ.get(EXPERIMENT_ENV) or options.pop("experiment_name", None)
    options.pop("experiment_name", None)
    return MLflowTracker(experiment_name=experiment, **options)


__all__ = ["MLflowTracker", "create_tracker", "default_tracking_uri"]
