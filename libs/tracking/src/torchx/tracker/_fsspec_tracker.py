"""FsspecTracker: runs kept as small JSON records on any fsspec URL.

Layout under the root (one folder per run, named by the run id in base32 so any id is
a valid file name on every store; an id whose base32 would pass 255 characters, the
file-name limit of common filesystems, gets a bounded name instead, a readable prefix
and a hash: ``<prefix>-<sha256>``, found again through its ``run.json``)::

    <root>/<RUN>/run.json               {"version": 1, "run_id", "experiment"}
    <root>/<RUN>/metadata/<STAMP>.json  {"version": 1, "metadata": {...}}
    <root>/<RUN>/artifacts/<STAMP>.json {"version": 1, "name", "path", "metadata"}
    <root>/<RUN>/sources/<SOURCE>.json  {"version": 1, "source_run_id", "artifact_name"}

Every record is a new file written atomically by the same code as
``torchx.runtime.tracking`` (a temporary file renamed into place on local disk, one
upload on object stores), so replicas writing at once never overwrite each other's
records: nothing is lost and no reader sees half a record. ``STAMP`` is the write time
in nanoseconds plus a random part; merging metadata in stamp order lets the latest
value of a key win. A source's file name is derived from the source and artifact
(base32, or a bounded name when that would be too long), so the replicas of one app
recording the same parent make one record. Records keep ``"version": 1``: bounded names changed only
where long ids are kept, and every id that worked before keeps its place.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import time

from torchx.runtime.tracking._document import MAX_DOCUMENT_BYTES, decode_object
from torchx.runtime.tracking._errors import too_large_text
from torchx.runtime.tracking._stores import DocumentStore, store_for

from ._base import TrackerArtifact, TrackerSource
from ._config_file import read_config_file
from ._errors import InvalidRecordError, TrackerConfigError, UnreadRecordWarning, warn_unread
from ._records import CheckedTracker, stored_artifact, stored_source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _T = TypeVar("_T")
    # reads one record's fields; an UnreadRecordWarning (not raised) when not as written
    _Parse = Callable[[str, dict[str, Any]], _T | UnreadRecordWarning]

FORMAT_VERSION = 1
RUN_RECORD = "run.json"
DEFAULT_EXPERIMENT = "default"
EXPERIMENT_ENV = "TORCHX_TRACKING_EXPERIMENT_NAME"
_SUFFIX = ".json"
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)

#: Largest record file this tracker writes or reads, in bytes (16 MiB, as for a result
#: document): a read holds at most this much, whatever file sits at a record's path.
MAX_RECORD_BYTES = MAX_DOCUMENT_BYTES


def encode_run_id(run_id: str) -> str:
    """Base32 of ``run_id``'s UTF-8 text, without padding (a run's folder name when short)."""
    return base64.b32encode(run_id.encode("utf-8")).decode("ascii").rstrip("=")


#: The longest file or folder name this tracker makes. 255 bytes is the limit of
#: common local filesystems; a record's temporary name adds 19 characters to its own.
MAX_NAME = 255 - 19
#: how much of a long id its bounded name shows, before the hash
_READABLE = 48
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def bounded_name(value: str, limit: int = MAX_NAME) -> str:
    """A file name for any id: its base32 where that fits in ``limit`` characters, else
    a readable prefix and a hash, ``<prefix>-<sha256, 32 hex digits>`` (at most 81).

    Base32 names are what every version of this tracker wrote, so a short id keeps
    its folder. A bounded name always holds a ``-``, which base32 never does: the two
    forms cannot collide, and :func:`decode_run_id` tells them apart.
    """
    encoded = encode_run_id(value)
    if len(encoded) <= limit:
        return encoded
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:32]
    readable = _UNSAFE.sub("_", value[:_READABLE]).lstrip(".") or "id"
    return f"{readable}-{digest}"


def run_folder_name(run_id: str) -> str:
    # base32 folders of up to 255 characters were written before bounded names
    # existed, and are still found where they are
    return bounded_name(run_id, limit=255)


def decode_run_id(name: str) -> str | None:
    """The run id a folder name encodes, or None for a name this tracker did not make."""
    try:
        padded = name + "=" * (-len(name) % 8)
        return base64.b32decode(padded).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def _stamp() -> str:
    """A new record's file name: nanoseconds since the epoch, zero-padded so names sort by
    time, then random bytes so writers in the same nanosecond never collide."""
    return f"{time.time_ns():020d}-{os.urandom(6).hex()}"


# how to read a run without a damaged record, for its warning to name (nothing is lost
# by moving it: the reader skips it anyway)
_FIX = "move the file out of the run's folder (or restore it) to read the run without it"
# a run record is the same from every write (the run id and experiment): any new write to
# the run puts it back, and until then the run is missing from listings that need it
_RUN_FIX = (
    "restore it, or record anything to the run again (its next write rewrites the file);"
    " until then the run is left out of listings by experiment (and, for a long run id,"
    " of run_ids())"
)


def _metadata_of(path: str, record: dict[str, Any]) -> dict[str, object] | UnreadRecordWarning:
    values = record.get("metadata")
    if not isinstance(values, dict):
        return UnreadRecordWarning(path, f"'metadata' is not a JSON object; {_FIX}")
    return values


def _artifact_of(path: str, record: dict[str, Any]) -> TrackerArtifact | UnreadRecordWarning:
    name = record.get("name")
    if not isinstance(name, str):
        return UnreadRecordWarning(path, f"an artifact needs a str 'name'; {_FIX}")
    return stored_artifact(path, name, record, _FIX)


def _source_of(path: str, record: dict[str, Any]) -> TrackerSource | UnreadRecordWarning:
    return stored_source(path, record, _FIX)


# what a skipped record may change: the merge of a run's records lets the newest value
# of each key (artifact name) win, and the skipped one may have been the newest
_OLDER_VALUES = "; without it, a key this record set may show an older value, or none"
_OLDER_ARTIFACT = "; without it, its artifact may show an older record, or none"


class FsspecTracker(CheckedTracker):
    """A tracker on an fsspec filesystem ``fs`` under folder ``root_dir``.

    ``experiment`` groups the runs this tracker records (default: the variable
    ``TORCHX_TRACKING_EXPERIMENT_NAME``, else ``"default"``). The folder is made by the
    first write; reading makes nothing, and :meth:`missing_store_note` says when the
    folder is missing. :func:`create` makes one from a URL (``/tmp/runs``, ``s3://b/runs``).

    ``max_record_bytes`` (default :data:`MAX_RECORD_BYTES`) bounds each record written
    and read, and so the memory a read holds; raise it to read larger records kept by
    other tools or an older torchx (:func:`create` takes it too).
    """

    def __init__(
        self,
        fs: Any,
        root_dir: str,
        experiment: str | None = None,
        *,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        if (
            not isinstance(max_record_bytes, int)
            or isinstance(max_record_bytes, bool)
            or max_record_bytes < 1
        ):
            raise TrackerConfigError(
                "max_record_bytes",
                max_record_bytes,
                f"give a whole number of bytes >= 1 (default MAX_RECORD_BYTES, {MAX_RECORD_BYTES})",
            )
        self.max_record_bytes = max_record_bytes
        self.fs = fs
        self._root = root_dir.rstrip("/") or "/"
        self._store: DocumentStore = store_for(fs)
        self.experiment = experiment or os.environ.get(EXPERIMENT_ENV) or DEFAULT_EXPERIMENT
        self._runs_announced: set[str] = set()
        self._root_made = False
        # what the user gave for the folder, as the errors about it name it
        self._origin: tuple[str, str] = ("fsspec tracker root_dir", root_dir)
        # how a reader raises the limit, as the error of a record over it says
        self._raise_limit = "pass FsspecTracker(fs, root_dir, max_record_bytes=N)"

    @property
    def root_dir(self) -> str:
        return self._root

    def __repr__(self) -> str:
        return f"FsspecTracker(root_dir={self._root!r}, experiment={self.experiment!r})"

    # -- writing ------------------------------------------------------------------

    def _run_dir(self, run_id: str) -> str:
        return f"{self._root}/{run_folder_name(run_id)}"

    def _encode(self, what: str, record: dict[str, object]) -> bytes:
        """The record's file content; InvalidRecordError (nothing written) when it would be
        over ``max_record_bytes``, so every record written can be read back."""
        data = _ENCODER.encode({"version": FORMAT_VERSION, **record}).encode("utf-8")
        if len(data) > self.max_record_bytes:
            raise InvalidRecordError(
                f"{what} (bytes of JSON)",
                len(data),
                f"a record holds at most {_limit_text(self.max_record_bytes)} bytes; keep"
                " large data in a file and record its path with add_artifact",
            )
        return data

    def _announce(self, run_id: str) -> None:
        """Write the run's own record once per tracker (the same bytes from every replica)."""
        if run_id in self._runs_announced:
            return
        self._make_root()
        record: dict[str, object] = {"run_id": run_id, "experiment": self.experiment}
        data = self._encode(f"run record of {run_id[:80]!r}", record)
        self._store.write(f"{self._run_dir(run_id)}/{RUN_RECORD}", data)
        self._runs_announced.add(run_id)

    def _append(self, run_id: str, category: str, record: dict[str, object]) -> None:
        data = self._encode(f"{category} record", record)  # checked before anything is written
        self._announce(run_id)
        self._store.write(f"{self._run_dir(run_id)}/{category}/{_stamp()}{_SUFFIX}", data)

    def _store_metadata(self, run_id: str, metadata: dict[str, object]) -> None:
        self._append(run_id, "metadata", {"metadata": metadata})

    def _store_artifact(self, run_id: str, artifact: TrackerArtifact) -> None:
        self._append(run_id, "artifacts", artifact.to_dict())

    def _store_source(self, run_id: str, source: TrackerSource) -> None:
        data = self._encode("sources record", source.to_dict())  # before the run record
        self._announce(run_id)
        # one name per (source, artifact), so the replicas of an app make one record;
        # the reader goes by the record's content, not by this name
        source_id, artifact_name = source.source_run_id, source.artifact_name
        name = encode_run_id(source_id)
        if artifact_name is not None:
            name += "." + encode_run_id(artifact_name)
        if len(name) + len(_SUFFIX) > MAX_NAME:
            name = bounded_name(f"{source_id}\0{artifact_name or ''}", limit=0)
        self._store.write(f"{self._run_dir(run_id)}/sources/{name}{_SUFFIX}", data)

    def _make_root(self) -> None:
        """Make the folder, once per tracker, at its first write (never on a read, so a
        mistyped URL given to a reader leaves no folder behind)."""
        if self._root_made:
            return
        try:
            self.fs.makedirs(self._root, exist_ok=True)
        except OSError as e:
            raise TrackerConfigError(
                *self._origin,
                f"its folder cannot be created ({e.strerror or e}); give a folder the app can"
                " write",
            ) from None
        self._root_made = True

    # -- reading ------------------------------------------------------------------

    def missing_store_note(self) -> str | None:
        """Name the folder when it does not exist: nothing was recorded there yet, which
        is how a freshly configured tracker starts, and how a mistyped URL looks."""
        if self._root_made or self.fs.isdir(self._root):
            return None
        field, value = self._origin
        folder = "the folder" if value == self._root else f"its folder {self._root}"
        return (
            f"{field} {value!r}: {folder} does not exist, so nothing has been recorded there"
            " yet; a run's first record makes it (if the URL is mistyped, correct config="
            " under [tracker:NAME] in .torchxconfig)"
        )

    def _read(self, path: str, fix: str = _FIX) -> dict[str, Any] | UnreadRecordWarning:
        """The record at ``path``, or (not raised, so that nothing keeps the bytes read
        alive) why it cannot be read, with ``fix`` for a damaged one; FileNotFoundError
        when it is gone."""
        limit = self.max_record_bytes
        data = self._store.read(path, limit)  # at most limit + 1 bytes, whatever the file
        if len(data) > limit:
            return UnreadRecordWarning(  # intact, only larger than this tracker reads
                path,
                f"{too_large_text(self._store.size(path), limit, _limit_text(limit))}; to read"
                f" it, {self._raise_limit} with N at least its size, or read it with fsspec at"
                " that path",
                damaged=False,
            )
        try:
            record = decode_object(data, "a JSON object (a tracker record)")
        except ValueError as e:
            return UnreadRecordWarning(path, f"{e}; {fix}")
        if record.get("version") != FORMAT_VERSION:
            return UnreadRecordWarning(
                path,
                f"format version {record.get('version')!r}; this torchx reads version"
                f" {FORMAT_VERSION} (upgrade torchx-tracking to read newer records)",
            )
        return record

    def _run_record(self, folder: str) -> dict[str, Any] | None:
        """The run record in ``folder``, or None when it is gone or cannot be read; the
        latter is warned about, naming it, so that it costs the reader the listings that
        need it (the run under its experiment; a long id's run) and nothing else."""
        try:
            record = self._read(f"{folder}/{RUN_RECORD}", _RUN_FIX)
        except FileNotFoundError:
            return None  # removed since it was listed
        if isinstance(record, UnreadRecordWarning):
            warn_unread(record)
            return None
        return record

    def _records(
        self, run_id: str, category: str, parse: _Parse[_T], skipped: str = ""
    ) -> list[_T]:
        """``parse(path, record)`` of each of the run's records of ``category``, in stamp
        order; a record that cannot be read or parsed is left out with a warning, which
        adds ``skipped`` (what its absence may change for the caller)."""
        folder = f"{self._run_dir(run_id)}/{category}"
        names = sorted(
            name
            for name, is_folder in self._store.list_folder(folder)
            if not is_folder and name.endswith(_SUFFIX) and not name.startswith(".")
        )
        out = []
        for name in names:
            path = f"{folder}/{name}"
            try:
                record = self._read(path)
            except FileNotFoundError:
                continue  # removed since it was listed
            parsed = record if isinstance(record, UnreadRecordWarning) else parse(path, record)
            if isinstance(parsed, UnreadRecordWarning):
                warn_unread(UnreadRecordWarning(path, parsed.reason + skipped, parsed.damaged))
            else:
                out.append(parsed)
        return out

    def metadata(self, run_id: str) -> dict[str, object]:
        merged: dict[str, object] = {}
        for values in self._records(run_id, "metadata", _metadata_of, _OLDER_VALUES):
            merged.update(values)
        return merged

    def artifacts(self, run_id: str) -> dict[str, TrackerArtifact]:
        found = self._records(run_id, "artifacts", _artifact_of, _OLDER_ARTIFACT)
        return {a.name: a for a in found}

    def sources(self, run_id: str, artifact_name: str | None = None) -> list[TrackerSource]:
        found = self._records(run_id, "sources", _source_of)
        return [s for s in found if artifact_name is None or s.artifact_name == artifact_name]

    def _run_folders(self) -> list[tuple[str, str]]:
        """``(run_id, folder)`` of every run folder under the root, sorted by run id."""
        runs = []
        for name, is_folder in self._store.list_folder(self._root):
            if not is_folder:
                continue
            folder = f"{self._root}/{name}"
            run_id = decode_run_id(name)
            if run_id is None and "-" in name and not name.startswith("."):
                run_id = self._long_run_id(folder)  # a bounded name: its record tells
            if run_id is not None and run_folder_name(run_id) == name:
                runs.append((run_id, folder))
        runs.sort()
        return runs

    def _long_run_id(self, folder: str) -> str | None:
        record = self._run_record(folder)
        run_id = None if record is None else record.get("run_id")
        return run_id if isinstance(run_id, str) else None

    def _experiment_of(self, folder: str) -> str | None:
        record = self._run_record(folder)
        experiment = None if record is None else record.get("experiment")
        return experiment if isinstance(experiment, str) else None

    def run_ids(self, parent_run_id: str | None = None, **kwargs: str) -> list[str]:
        """Recorded run ids, sorted. Filters: ``parent_run_id`` (runs with that source; 0.7
        took it positionally too), ``experiment`` (runs recorded under that experiment)."""
        if parent_run_id is not None:
            kwargs["parent_run_id"] = parent_run_id
        parent, experiment = self._run_filters(kwargs)
        out = []
        for run_id, folder in self._run_folders():
            if experiment is not None and self._experiment_of(folder) != experiment:
                continue
            if parent is not None and not any(
                s.source_run_id == parent for s in self.sources(run_id)
            ):
                continue
            out.append(run_id)
        return out

    def experiments(self) -> list[str]:
        names = {self._experiment_of(folder) for _, folder in self._run_folders()}
        return sorted(name for name in names if name is not None)


def _put_nested(config: dict[str, Any], key: str, value: str, origin: str) -> None:
    head, dot, rest = key.partition(".")
    if not dot:
        config[key] = value
        return
    if not head or not rest:
        raise TrackerConfigError(f"{origin}: key", key, "nested keys look like a.b=value")
    nested = config.setdefault(head, {})
    if not isinstance(nested, dict):
        raise TrackerConfigError(f"{origin}: key", key, f"{head!r} is set both plainly and nested")
    _put_nested(nested, rest, value, origin)


def _limit_text(limit: int) -> str:
    if limit == MAX_RECORD_BYTES:
        return f"MAX_RECORD_BYTES ({MAX_RECORD_BYTES})"
    return f"max_record_bytes ({limit})"


def _read_options_file(fs: Any, path: str, origin: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    content = read_config_file(
        fs,
        path,
        "fsspec tracker config",
        origin,
        "give the URL of the runs' folder, or of an options file of protocol=... and"
        " root_path=... lines",
    )
    for line in content.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition("=")
        if not sep or not key.strip():
            raise TrackerConfigError(f"{origin}: line", line, "write key=value")
        _put_nested(options, key.strip(), value.strip(), origin)
    return options


def _whole_bytes(text: object, origin: str) -> int:
    """An options file's ``max_record_bytes=`` value."""
    value = text.strip() if isinstance(text, str) else ""
    if not value.isdigit() or int(value) < 1:
        raise TrackerConfigError(
            f"{origin}: max_record_bytes",
            text,
            f"give a whole number of bytes >= 1 (default MAX_RECORD_BYTES, {MAX_RECORD_BYTES})",
        )
    return int(value)


def _raise_limit_text(config: str, options_file: bool, fs: Any, path: str) -> str:
    """How the user of :func:`create` raises the read limit: in the options file, or as
    create's keyword (Python) or an options file (``.torchxconfig`` and the CLI pass a
    config URL only)."""
    if options_file:
        return f"set max_record_bytes=N in the options file {config}"
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return (
        f"pass create({config!r}, max_record_bytes=N) (from .torchxconfig or the CLI: set"
        f" config to an options file of protocol={protocol}, root_path={path} and"
        " max_record_bytes=N lines)"
    )


def create(
    config_file: str | None, *, max_record_bytes: int | None = None, **storage_options: Any
) -> FsspecTracker:
    """The ``fsspec`` tracker factory: ``config_file`` (0.7's name) is where runs are kept.

    Either a folder URL or path (``/tmp/torchx_runs``, ``s3://bucket/runs``,
    ``memory://runs``), made by the first write; or, as in torchx 0.7, the URL of an options
    file of ``key=value`` lines with ``protocol`` and ``root_path`` (other keys go to the
    filesystem; ``experiment_name`` names the experiment, ``max_record_bytes`` the
    tracker's record limit). ``storage_options`` go to the filesystem of a URL; fsspec's
    ``FSSPEC_<PROTOCOL>_<OPTION>`` variables work too. ``max_record_bytes`` is the
    tracker's own (see :class:`FsspecTracker`; default: the options file's, else
    :data:`MAX_RECORD_BYTES`).
    """
    config = config_file
    if not config or not config.strip():
        raise TrackerConfigError(
            "fsspec tracker config",
            config,
            "set config=URL under [tracker:NAME] in .torchxconfig (a folder such as"
            " /tmp/torchx_runs or s3://bucket/runs)",
        )
    from fsspec.core import url_to_fs  # type: ignore[import-untyped]

    from torchx.runtime.tracking._storage_options import unknown_for, unknown_option

    own = ("max_record_bytes",)  # a misspelling of it is named as such
    ignored = unknown_option(config, storage_options, own)
    if ignored is not None:
        raise TrackerConfigError("fsspec tracker storage options", sorted(storage_options), ignored)
    try:
        fs, path = url_to_fs(config, **storage_options)
    except (ValueError, ImportError) as e:  # an unknown protocol, or its package missing
        raise TrackerConfigError(
            "fsspec tracker config",
            config,
            f"{e}; give a folder or an fsspec URL whose filesystem is installed",
        ) from None
    experiment = None
    options_file = fs.isfile(path)
    if options_file:
        options = _read_options_file(fs, path, config)
        protocol, root = options.pop("protocol", None), options.pop("root_path", None)
        experiment = options.pop("experiment_name", None)
        limit_line = options.pop("max_record_bytes", None)
        if limit_line is not None and max_record_bytes is None:
            max_record_bytes = _whole_bytes(limit_line, f"fsspec tracker options file {config}")
        if not protocol or not root:
            raise TrackerConfigError(
                f"fsspec tracker options file {config}",
                sorted(options),
                "it needs protocol=... and root_path=... lines",
            )
        import fsspec  # type: ignore[import-untyped]

        origin = f"fsspec tracker options file {config}"
        try:
            cls = fsspec.get_filesystem_class(protocol)
        except (ValueError, ImportError) as e:  # an unknown protocol, or its package missing
            raise TrackerConfigError(
                f"{origin}: protocol", protocol, f"{e}; name an installed fsspec filesystem"
            ) from None
        ignored = unknown_for(cls, protocol, options, own)
        if ignored is not None:
            raise TrackerConfigError(f"{origin}: keys", sorted(options), ignored)
        fs, path = fsspec.filesystem(protocol, **options), root
    tracker = FsspecTracker(  # checks max_record_bytes before anything is made
        fs,
        path,
        experiment,
        max_record_bytes=MAX_RECORD_BYTES if max_record_bytes is None else max_record_bytes,
    )
    tracker._raise_limit = _raise_limit_text(config, options_file, fs, path)
    tracker._origin = ("fsspec tracker config", config)
    return tracker
