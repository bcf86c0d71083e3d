"""The record of a sweep, kept as versioned JSON so any later command finds its trials.

``<state dir>/sweeps/<sweep id>.json`` (the state directory of the local schedulers,
``$XDG_STATE_HOME/torchx``) holds what was swept and, for each trial, the app id of every
attempt. The record is written whole and renamed into place, so a reader never sees half
of it. A sweep of one request (a Slurm array, an Indexed Job) is written once its request
is accepted; one whose trials a local process submits is written before that process
starts (it reads the record) and again as trials are submitted. Beside it,
``<sweep id>.writer`` and ``<sweep id>.lock`` are the locks a resume or a cancel holds
while it changes the record (``_sweep_lock``). The record holds the scheduler's
parameters, so it is private to its owner: the file 0600, the folder 0700.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from torchx.schedulers.atomic_files import write_atomic
from torchx.schedulers.sweep_names import SWEEP_ID_FORM, SWEEP_ID_PATTERN
from torchx.specs import SpecsError

# 2 added scheduler_params and component_defaults; a record of version 1 reads as one
# without them (what its driver was started with).
RECORD_VERSION = 2
_READABLE_VERSIONS = (1, RECORD_VERSION)
SWEEP_PREFIX = "sweep-"
_SWEEP_ID = re.compile(rf"^{SWEEP_ID_PATTERN}$")


def is_sweep_id(app_id: str) -> bool:
    return bool(_SWEEP_ID.match(app_id))


def sweeps_dir() -> Path:
    from torchx.schedulers.local_scheduler import default_state_dir

    return default_state_dir() / "sweeps"


@dataclass
class TrialRecord:
    index: int
    args: dict[str, str]
    # app ids of the trial's submissions, the latest last
    attempts: list[str] = field(default_factory=list)
    # set when the sweep was cancelled before this trial was ever submitted
    cancelled: bool = False
    # why the last submission of this trial was refused
    error: str = ""
    # the latest attempt's end, as the driver saw it (the scheduler may forget the app)
    final_state: str = ""
    final_exit_code: int | None = None


_TRIAL_FIELDS = fields(TrialRecord)


@dataclass
class SweepRecord:
    sweep_id: str
    scheduler: str
    session: str
    component: str
    base_args: list[str]
    parallel: int
    # "array": the backend's own job array (``array_jobs`` lists each submission);
    # "indexed": Kubernetes Indexed Jobs (``array_jobs`` lists each, NAMESPACE:JOB);
    # "group": a local process (the local schedulers' supervised group, or the sweep's
    # driver) runs or submits one app per trial, at most ``parallel`` at once
    mode: str
    trials: list[TrialRecord]
    cfg: dict[str, Any] = field(default_factory=dict)
    # the workspace each trial's dryrun builds; None where it was built once for the sweep
    workspace: str | None = None
    # the workspace built once for every trial, and each role image it was built into
    built_workspace: str | None = None
    images: dict[str, str] = field(default_factory=dict)
    parent_run_id: str | None = None
    array_jobs: list[str] = field(default_factory=list)
    # the group's driver process: pid and its start time, to tell it from a reused pid
    driver_pid: int | None = None
    # set by the driver as it exits
    driver_done: bool = False
    cancelled: bool = False
    created: float = 0.0
    # what the driver process builds its Runner with, as the submitting Runner had them:
    # the parameters of ``scheduler``'s factory and the code's component defaults
    scheduler_params: dict[str, Any] = field(default_factory=dict)
    component_defaults: dict[str, dict[str, str]] = field(default_factory=dict)
    version: int = RECORD_VERSION

    @property
    def handle(self) -> str:
        return f"{self.scheduler}://{self.session}/{self.sweep_id}"

    def to_json(self) -> dict[str, Any]:
        # Shallow, field by field (asdict deep-copies every trial's values first): the
        # record is saved at each submission.
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["trials"] = [{f.name: getattr(t, f.name) for f in _TRIAL_FIELDS} for t in self.trials]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> SweepRecord:
        if data.get("version") not in _READABLE_VERSIONS:
            raise SpecsError(
                "sweep record",
                where,
                f"version {data.get('version')!r} is not {RECORD_VERSION}; use the torchx that "
                "wrote it",
            )
        body = {**data, "version": RECORD_VERSION}
        trials = [TrialRecord(**t) for t in body.pop("trials")]
        return cls(trials=trials, **body)


def record_path(sweep_id: str) -> Path:
    if not is_sweep_id(sweep_id):
        raise SpecsError("sweep id", sweep_id, f"a sweep id is {SWEEP_ID_FORM}")
    return sweeps_dir() / f"{sweep_id}.json"


def recorded_sweep_id(handle: str) -> str | None:
    """The sweep id ``handle`` names when this machine holds that sweep's record, else
    None. The id's shape alone does not tell: an app named ``sweep`` gets an id of the
    same shape (``sweep-`` and random letters), and its handle is an app's."""
    from torchx.specs import parse_app_handle

    try:
        app_id = parse_app_handle(handle)[2]
    except SpecsError:
        return None
    if not is_sweep_id(app_id) or not record_path(app_id).exists():
        return None
    return app_id


# The record holds the scheduler's parameters (a token, an address with credentials), so
# only its owner may read it or list the folder.
_PRIVATE_FOLDER = 0o700
_PRIVATE_FILE = 0o600


def save(record: SweepRecord) -> None:
    """Write ``record``, checking the sweeps folder at every save: between a driver's
    saves (one per submission) the folder may be loosened, replaced by a file or by
    another user's, and each is answered in one line before the write."""
    path = record_path(record.sweep_id)
    ready_sweeps_dir()
    write_atomic(str(path), record.to_json(), _PRIVATE_FILE)


def ready_sweeps_dir() -> Path:
    """The sweeps folder, made if missing and checked (``_keep_private``) before anything
    is written into it."""
    folder = sweeps_dir()
    # A file in the folder's place raises FileExistsError too; _keep_private names it.
    try:
        folder.mkdir(mode=_PRIVATE_FOLDER, parents=True)
    except FileExistsError:
        pass
    except NotADirectoryError:
        raise _file_above(folder) from None
    _keep_private(folder)
    return folder


def _file_above(folder: Path) -> SpecsError:
    """The error for a sweeps ``folder`` that cannot be reached (NotADirectoryError): a
    file sits where it or one of the folders above it goes, and the nearest is named."""
    above = next(p for p in (folder, *folder.parents) if p.exists())
    return _a_file("sweeps folder" if above == folder else "state folder", above)


def _a_file(name: str, path: Path) -> SpecsError:
    return SpecsError(
        name,
        str(path),
        "it is a file, not a folder; move it away or set XDG_STATE_HOME to a folder of your own",
    )


def _link_to_nothing(folder: Path) -> SpecsError:
    """The error for a sweeps ``folder`` that is in place but leads nowhere: a symbolic
    link to a path that does not exist sits where it or a folder above it goes, and the
    nearest such link is named with where it points."""
    for path in (folder, *folder.parents):
        if path.is_symlink() and not path.exists():
            return SpecsError(
                "sweeps folder" if path == folder else "state folder",
                str(path),
                f"it is a symbolic link to {os.readlink(path)}, which does not exist; make that"
                " folder, remove the link, or set XDG_STATE_HOME to a folder of your own",
            )
    # the link was there for mkdir and is gone (or fixed) now: the next try finds its way
    return SpecsError("sweeps folder", str(folder), "changed while being made; try again")


def _keep_private(folder: Path) -> None:
    """Make the sweeps folder the user's own ``folder`` 0700 (mkdir's mode is cut by the
    umask and skipped for a folder an older torchx made). One the user does not own and
    cannot chmod is used as it is if it is writable: a shared state folder."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:  # mkdir found something in place, which leads nowhere
        raise _link_to_nothing(folder) from None
    if not stat.S_ISDIR(st.st_mode):
        raise _a_file("sweeps folder", folder)
    if st.st_uid == os.geteuid():
        if stat.S_IMODE(st.st_mode) != _PRIVATE_FOLDER:
            os.chmod(folder, _PRIVATE_FOLDER)
    elif not os.access(folder, os.W_OK):
        raise SpecsError(
            "sweeps folder",
            str(folder),
            f"is owned by uid {st.st_uid} with mode {stat.S_IMODE(st.st_mode):o} and you may "
            "not write to it; set XDG_STATE_HOME to a folder of your own",
        )


def load(sweep_id: str) -> SweepRecord | None:
    path = record_path(sweep_id)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise _file_above(path.parent) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecsError("sweep record", str(path), f"is not JSON ({e}); remove it") from None
    return SweepRecord.from_json(data, str(path))
