"""Checking what apps record: JSON values only, so every backend can store and show them."""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping

from ._base import TrackerArtifact, TrackerBase, TrackerSource
from ._errors import InvalidRecordError, TrackerConfigError, UnreadRecordWarning, shown

_FIX = "use str, int, float, bool, None, lists and str-keyed dicts of them"


def json_value(field: str, value: object) -> object:
    """``value`` as plain JSON data (tuples become lists), or InvalidRecordError."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidRecordError(field, value, "NaN and infinities are not JSON; store a str")
        return value
    if isinstance(value, (list, tuple)):
        return [json_value(f"{field}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise InvalidRecordError(f"{field} key", key, "dict keys must be str")
            out[key] = json_value(f"{field}[{key!r}]", v)
        return out
    raise InvalidRecordError(field, value, f"{type(value).__name__} is not JSON data; {_FIX}")


def json_mapping(field: str, values: Mapping[str, object]) -> dict[str, object]:
    if not isinstance(values, Mapping):
        raise InvalidRecordError(field, values, "give a dict of str keys to JSON values")
    return {key: json_value(f"{field}[{key!r}]", v) for key, v in values.items()}


def text(field: str, value: object, *, optional: bool = False) -> str | None:
    """A non-empty str (or None when ``optional``), or InvalidRecordError."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidRecordError(field, value, "give a non-empty str")
    return value


class CheckedTracker(TrackerBase):
    """A backend that checks every record the same way before it writes anything.

    ``add_metadata``, ``add_artifact`` and ``add_source`` refuse a bad argument with
    InvalidRecordError, naming the field, and hand what passed to one hook each; so a
    record one backend takes, every backend takes, and each backend only stores it.
    """

    def add_metadata(self, run_id: str, **kwargs: object) -> None:
        checked_id = str(text("run_id", run_id))
        metadata = json_mapping("metadata", kwargs)
        if metadata:
            self._store_metadata(checked_id, metadata)

    def add_artifact(
        self,
        run_id: str,
        name: str,
        path: str,
        metadata: Mapping[str, object] | None = None,
    ) -> None:
        checked_id = str(text("run_id", run_id))
        artifact = TrackerArtifact(
            str(text("artifact name", name)),
            str(text(f"artifact {name!r} path", path)),
            None if metadata is None else json_mapping(f"artifact {name!r} metadata", metadata),
        )
        self._store_artifact(checked_id, artifact)

    def add_source(self, run_id: str, source_id: str, artifact_name: str | None = None) -> None:
        checked_id = str(text("run_id", run_id))
        source = TrackerSource(
            str(text("source_id", source_id)),
            text("artifact_name", artifact_name, optional=True),
        )
        self._store_source(checked_id, source)

    def _run_filters(self, filters: Mapping[str, str]) -> tuple[str | None, str | None]:
        """``(parent_run_id, experiment)`` of a ``run_ids`` call, the filters every backend
        here takes; TrackerConfigError for any other."""
        unknown = set(filters) - {"parent_run_id", "experiment"}
        if unknown:
            raise TrackerConfigError(
                "run_ids filter",
                sorted(unknown)[0],
                f"{type(self).__name__} filters by parent_run_id and experiment",
            )
        return filters.get("parent_run_id"), filters.get("experiment")

    @abc.abstractmethod
    def _store_metadata(self, run_id: str, metadata: dict[str, object]) -> None:
        """Keep ``metadata`` (JSON values, at least one key) for ``run_id``."""

    @abc.abstractmethod
    def _store_artifact(self, run_id: str, artifact: TrackerArtifact) -> None:
        """Keep ``artifact`` (its metadata JSON values, or None) for ``run_id``."""

    @abc.abstractmethod
    def _store_source(self, run_id: str, source: TrackerSource) -> None:
        """Keep ``source`` for ``run_id``."""


def stored_artifact(
    where: str, name: str, record: Mapping[str, object], fix: str
) -> TrackerArtifact | UnreadRecordWarning:
    """The artifact ``name`` a stored record holds, or (not raised) why it holds none;
    ``fix`` says how to read the run without the record, for the warning to name."""
    path, metadata = record.get("path"), record.get("metadata")
    if not isinstance(path, str):
        return UnreadRecordWarning(where, f"an artifact needs a str 'path'; {fix}")
    if metadata is not None and not isinstance(metadata, dict):
        return UnreadRecordWarning(where, f"artifact 'metadata' is not a JSON object; {fix}")
    return TrackerArtifact(name, path, metadata)


def stored_source(
    where: str, record: Mapping[str, object], fix: str
) -> TrackerSource | UnreadRecordWarning:
    """The source a stored record holds, or (not raised) why it holds none; ``fix`` says
    how to read the run without the record, for the warning to name."""
    source, artifact = record.get("source_run_id"), record.get("artifact_name")
    if not isinstance(source, str):
        return UnreadRecordWarning(where, f"a source needs a str 'source_run_id'; {fix}")
    if not (artifact is None or isinstance(artifact, str)):
        return UnreadRecordWarning(
            where, f"a source's 'artifact_name' must be a str or null, not {shown(artifact)}; {fix}"
        )
    return TrackerSource(source, artifact)
