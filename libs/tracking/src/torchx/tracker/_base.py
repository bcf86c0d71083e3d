"""The tracker contract: what a backend stores for a run, and the records it returns.

The records are small plain classes rather than dataclasses: importing ``dataclasses``
(and the ``inspect`` module it pulls in) would cost an app more than the rest of this
package together.
"""

from __future__ import annotations

import abc

# Annotations are strings here (see the __future__ import); importing typing or
# collections.abc only for them would cost every app at import time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


class _Record:
    """Equality, repr and ``to_dict`` from ``__slots__``, as a dataclass would give."""

    _fields: tuple[str, ...] = ()
    __slots__ = ()

    def to_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self._fields}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable, as dataclasses are by default

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"


class TrackerSource(_Record):
    """A run (or any outside entity, such as a data set) that a run was derived from.

    ``artifact_name`` says what was taken from the source (``"checkpoint"``); None when
    the link is the run as a whole, as with ``torchx run --parent_run_id``.
    """

    _fields = ("source_run_id", "artifact_name")
    __slots__ = _fields

    def __init__(self, source_run_id: str, artifact_name: str | None) -> None:
        self.source_run_id = source_run_id
        self.artifact_name = artifact_name


class TrackerArtifact(_Record):
    """Something a run produced: a name, where it is, and optional metadata about it."""

    _fields = ("name", "path", "metadata")
    __slots__ = _fields

    def __init__(self, name: str, path: str, metadata: Mapping[str, object] | None) -> None:
        self.name = name
        self.path = path
        self.metadata = metadata


class TrackerDescendant(_Record):
    """A run that names another run as its source (the other side of TrackerSource)."""

    _fields = ("run_id", "artifact_name")
    __slots__ = _fields

    def __init__(self, run_id: str, artifact_name: str | None) -> None:
        self.run_id = run_id
        self.artifact_name = artifact_name


class Lineage(_Record):
    """Where a run comes from (``sources``) and which runs build on it (``descendants``)."""

    _fields = ("run_id", "sources", "descendants")
    __slots__ = _fields

    def __init__(
        self,
        run_id: str = "",
        sources: list[TrackerSource] | None = None,
        descendants: list[TrackerDescendant] | None = None,
    ) -> None:
        self.run_id = run_id
        self.sources = list(sources or [])
        self.descendants = list(descendants or [])


class TrackerBase(abc.ABC):
    """A place that keeps, per run id, metadata, artifacts and the run's sources.

    Run ids are torchx app handles (``local_cwd://torchx/app-x1``) when the runner
    launched the app, or any other text a caller chooses. Subclasses implement the
    abstract methods; ``lineage`` and ``experiments`` have defaults built on them.
    """

    @abc.abstractmethod
    def add_artifact(
        self,
        run_id: str,
        name: str,
        path: str,
        metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Record that ``run_id`` produced artifact ``name`` at ``path``."""

    @abc.abstractmethod
    def artifacts(self, run_id: str) -> Mapping[str, TrackerArtifact]:
        """The run's artifacts by name (the latest record of each name wins)."""

    @abc.abstractmethod
    def add_metadata(self, run_id: str, **kwargs: object) -> None:
        """Record metadata of ``run_id``; keys given again replace their earlier value."""

    @abc.abstractmethod
    def metadata(self, run_id: str) -> Mapping[str, object]:
        """All metadata recorded for ``run_id``, merged."""

    @abc.abstractmethod
    def add_source(self, run_id: str, source_id: str, artifact_name: str | None = None) -> None:
        """Record that ``run_id`` derives from ``source_id`` (optionally: its ``artifact_name``)."""

    @abc.abstractmethod
    def sources(self, run_id: str, artifact_name: str | None = None) -> Iterable[TrackerSource]:
        """The run's sources, only those for ``artifact_name`` when it is given."""

    @abc.abstractmethod
    def run_ids(self, **kwargs: str) -> Iterable[str]:
        """Ids of the recorded runs; backends document the filters they take
        (``parent_run_id`` and ``experiment`` for the ones shipped here)."""

    def lineage(self, run_id: str) -> Lineage:
        """The run's sources and the runs that name it as their source."""
        descendants = [
            TrackerDescendant(other, source.artifact_name)
            for other in self.run_ids()
            if other != run_id
            for source in self.sources(other)
            if source.source_run_id == run_id
        ]
        return Lineage(run_id, list(self.sources(run_id)), descendants)

    def experiments(self) -> Iterable[str]:
        """Names of the experiments runs are grouped in (none for backends without them)."""
        return []

    def missing_store_note(self) -> str | None:
        """One line for a reader whose answers are all empty because this tracker's store
        does not exist yet (nothing was recorded through it: a freshly configured tracker,
        or a mistyped URL), naming the store; None when it exists or the backend cannot
        tell (the default). It must create nothing."""
        return None


def lineage_of(backend: TrackerBase, run_id: str) -> Lineage:
    """``backend.lineage(run_id)``; for a backend written for 0.7, whose ``lineage`` raises
    ``NotImplementedError`` (as 0.7's own backends' did), the default built from its
    ``sources`` and ``run_ids``, which 0.7 backends implement."""
    try:
        return backend.lineage(run_id)
    except NotImplementedError:
        return TrackerBase.lineage(backend, run_id)
