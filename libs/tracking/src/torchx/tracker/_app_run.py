"""AppRun: what an app uses to record its run, whichever trackers are configured."""

from __future__ import annotations

import os

from ._base import TrackerBase, _Record, lineage_of
from ._environ import ENV_TORCHX_JOB_ID, ENV_TORCHX_PARENT_RUN_ID, trackers_from_environ

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

UNDEFINED_JOB_ID = "<UNDEFINED>"


class AppRunTrackableSource(_Record):
    """A source of an AppRun, as an AppRun itself (``parent``) and what was taken from it."""

    _fields = ("parent", "artifact_name")
    __slots__ = _fields

    def __init__(self, parent: AppRun, artifact_name: str | None) -> None:
        self.parent = parent
        self.artifact_name = artifact_name


class AppRun(_Record):
    """One run (``id``) and the trackers (``backends``) that every ``add_*`` writes to.

    Inside an app launched by torchx, ``AppRun.run_from_env()`` gives the run of the app
    with the trackers of the launcher's ``.torchxconfig``. Reads (``sources``,
    ``children``) ask the first backend.
    """

    _fields = ("id", "backends")
    __slots__ = _fields

    def __init__(self, id: str, backends: Iterable[TrackerBase]) -> None:
        self.id = id
        self.backends = backends

    @staticmethod
    def run_from_env() -> AppRun:
        """This app's run, built once per process from the variables the runner sets.

        Outside torchx (no ``TORCHX_JOB_ID``) the id is ``<UNDEFINED>`` and, with no
        ``TORCHX_TRACKERS``, there are no backends, so the ``add_*`` methods do nothing.
        When ``TORCHX_PARENT_RUN_ID`` is set, the parent is recorded as the run's source.
        """
        return _run_from_env()

    def add_metadata(self, **kwargs: object) -> None:
        """Record metadata of this run (JSON values) on every backend."""
        for backend in self.backends:
            backend.add_metadata(self.id, **kwargs)

    def add_artifact(
        self, name: str, path: str, metadata: Mapping[str, object] | None = None
    ) -> None:
        """Record artifact ``name`` stored at ``path`` on every backend."""
        for backend in self.backends:
            backend.add_artifact(self.id, name, path, metadata)

    def add_source(self, source_id: str, artifact_name: str | None = None) -> None:
        """Record that this run derives from ``source_id`` (a run id or any outside id)."""
        for backend in self.backends:
            backend.add_source(self.id, source_id, artifact_name)

    def job_id(self) -> str:
        """The run id: the app handle when torchx launched the app."""
        return self.id

    def sources(self) -> list[AppRunTrackableSource]:
        """This run's sources, each as an AppRun on the same backends."""
        backend = next(iter(self.backends), None)
        if backend is None:
            return []
        return [
            AppRunTrackableSource(AppRun(s.source_run_id, self.backends), s.artifact_name)
            for s in backend.sources(self.id)
        ]

    def children(self) -> list[AppRun]:
        """The runs that name this run as their source, each once."""
        backend = next(iter(self.backends), None)
        if backend is None:
            return []
        lineage = lineage_of(backend, self.id)
        # a child that took several artifacts (or the run plus an artifact) is one
        # descendant per source record, and still one child
        run_ids = dict.fromkeys(d.run_id for d in lineage.descendants)
        return [AppRun(run_id, self.backends) for run_id in run_ids]


_from_env: list[AppRun] = []  # the one AppRun of this process, once built


def _run_from_env() -> AppRun:
    if _from_env:
        return _from_env[0]
    run_id = os.environ.get(ENV_TORCHX_JOB_ID) or UNDEFINED_JOB_ID
    trackers = trackers_from_environ()
    parent = os.environ.get(ENV_TORCHX_PARENT_RUN_ID)
    if parent:
        for tracker in trackers:
            tracker.add_source(run_id, parent, None)
    run = AppRun(run_id, trackers)
    _from_env.append(run)
    return run


def app_run_from_env() -> AppRun:
    """Shorthand for :meth:`AppRun.run_from_env`."""
    return AppRun.run_from_env()


# 0.7 cached run_from_env with functools.lru_cache, and its users' tests reset it between
# cases with ``AppRun.run_from_env.cache_clear()``; the same call empties this cache.
setattr(AppRun.run_from_env, "cache_clear", _from_env.clear)  # noqa: B010
