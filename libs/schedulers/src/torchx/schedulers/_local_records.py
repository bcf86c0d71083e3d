"""The records of local apps: how any process finds an app, reads its state, lists apps,
records the end of an app whose supervisor died without a word, and makes the answers of
``describe`` and ``statuses`` from an app's state.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from torchx.schedulers._api import DescribeAppResponse, ListAppResponse
from torchx.schedulers._errors import SchedulerError
from torchx.schedulers._local_processes import kill_recorded_groups, process_start_token
from torchx.schedulers._local_state_files import (
    META_DIR,
    REQUEST_FILE,
    STATE_FILE,
    StateFileError,
    read_data,
    record_orphaned_end,
)
from torchx.schedulers.sweep_names import ENV_SWEEP_ID, ENV_SWEEP_INDEX, sweep_trial
from torchx.specs import AppDef, AppState, ReplicaStatus, RoleStatus, SpecsError


class AppStateError(SchedulerError):
    """An app's state on disk cannot be read; the message names the file and why."""

    def __init__(self, backend: str, app_id: str, path: str, reason: str) -> None:
        self.app_id = app_id
        self.path = path
        super().__init__(
            backend,
            f"app {app_id!r}: cannot read its state file {path}: {reason}",
            "the app's other files are kept; delete its directory to forget the app",
        )


def default_state_dir() -> Path:
    """``$XDG_STATE_HOME/torchx``, else ``~/.local/state/torchx``.

    As the XDG spec says, a relative ``XDG_STATE_HOME`` is invalid and ignored: it would
    put the state wherever the command happens to run, one store per directory.
    """
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "torchx"


APP_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class LocalAppRecords:
    """The apps of one state directory, found by any process through its index of links.

    ``supervisors`` are the supervisor processes this process started (shared with the
    scheduler that started them): their exit is known without looking at /proc.
    """

    def __init__(
        self,
        backend: str,
        index: Path,
        cache_size: int,
        supervisors: dict[str, subprocess.Popen[bytes]],
    ) -> None:
        self.backend = backend
        self._index = index
        self.cache_size = cache_size
        self._supervisors = supervisors
        self._requests: dict[str, dict[str, Any]] = {}  # never change once written

    @property
    def index(self) -> Path:
        """The directory of links, one per app, to the app's directory."""
        return self._index

    def add(self, app_id: str, app_dir: str) -> None:
        try:
            os.symlink(app_dir, self._index / app_id)
        except FileNotFoundError:  # the index itself is made with the first app
            self._index.mkdir(parents=True, exist_ok=True)
            os.symlink(app_dir, self._index / app_id)

    def app_dir(self, app_id: str) -> str | None:
        if not isinstance(app_id, str) or not APP_ID.match(app_id):
            raise SpecsError(
                "app id", app_id, "expected NAME-SUFFIX as printed by run (letters, digits, -_.)"
            )
        try:
            # os.path, not pathlib: a sweep's status resolves every trial's link, and a
            # plain string per call costs less than a Path object
            target = os.readlink(os.path.join(self._index, app_id))
        except OSError:
            return None
        return target if os.path.isdir(os.path.join(target, META_DIR)) else None

    def read(
        self, app_dir: str, with_request: bool = True
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The app's request (not read without ``with_request``: empty then) and its
        current state."""
        try:
            request = self._requests.get(app_dir) if with_request else {}
            if request is None:
                path = os.path.join(app_dir, META_DIR, REQUEST_FILE)
                request = read_data(path) or {}
                if request:
                    if len(self._requests) >= self.cache_size:
                        # Requests never change, so the oldest one read is the one to forget.
                        del self._requests[next(iter(self._requests))]
                    self._requests[app_dir] = request
            state = read_data(os.path.join(app_dir, META_DIR, STATE_FILE)) or {}
        except StateFileError as e:
            raise AppStateError(self.backend, os.path.basename(app_dir), e.path, e.reason) from None
        return request, state

    def supervisor_alive(self, app_id: str, state: Mapping[str, Any]) -> bool | None:
        """Whether the app's supervisor runs; None when it cannot be told yet."""
        own = self._supervisors.get(app_id)
        if own is not None and own.poll() is not None:
            return False
        pid = state.get("supervisor_pid")
        if pid is None:
            return True if own is not None else None
        token = state.get("supervisor_start")
        if token is not None and os.path.isdir("/proc"):
            return bool(process_start_token(int(pid)) == token)
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def current_state(
        self, app_id: str, app_dir: str, with_request: bool = True
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``read``, and the end of an app whose supervisor died unrecorded is recorded."""
        request, state = self.read(app_dir, with_request)
        name = state.get("state", "UNKNOWN")
        if name in ("PENDING", "RUNNING") and self.supervisor_alive(app_id, state) is False:
            # It may have written its last state just before exiting.
            request, state = self.read(app_dir, with_request)
            if state.get("state") in ("PENDING", "RUNNING"):
                state = self.record_dead_supervisor(app_dir, state)
        return request, state

    def record_dead_supervisor(self, app_dir: str, state: dict[str, Any]) -> dict[str, Any]:
        """The supervisor died without a word: kill its replicas' groups and say so on disk."""
        killed = kill_recorded_groups(state)
        note = f"; torchx killed the process groups of its replicas still running: {killed}"
        # Recorded once, so later readers neither kill nor guess again.
        return record_orphaned_end(
            os.path.join(app_dir, META_DIR),
            state,
            state.get("supervisor_pid"),
            note if killed else "",
        )

    def links(self) -> list[os.DirEntry[str]]:
        """The index's entries named as app ids: each a link to an app's directory."""
        try:
            entries = list(os.scandir(self._index))
        except FileNotFoundError:
            return []
        return [entry for entry in entries if APP_ID.match(entry.name)]

    def summary(self, app_id: str, app_dir: str, linked_at: float | None = None) -> ListAppResponse:
        """The app's line in a listing; ``linked_at`` stands in for a submission time that
        its request does not record."""
        try:
            request, state = self.current_state(app_id, app_dir)
        except AppStateError as e:
            # One unreadable app is its own problem: it shows as UNKNOWN, with why.
            return ListAppResponse(app_id=app_id, state=AppState.UNKNOWN, name=str(e))
        replicas = request.get("replicas") or [{}]
        env = replicas[0].get("env") or {}  # a trial's every replica names its sweep
        return ListAppResponse(
            app_id=app_id,
            state=state_of(state.get("state", "UNKNOWN")),
            name=request.get("app", {}).get("name", ""),
            submitted_at=when(request.get("submitted_at")) or when(linked_at),
            started_at=when(state.get("started_at")),
            ended_at=when(state.get("ended_at")),
            sweep=sweep_trial(env.get(ENV_SWEEP_ID), env.get(ENV_SWEEP_INDEX)),
        )

    def list_apps(self) -> list[ListAppResponse]:
        out = []
        for app_id in sorted(entry.name for entry in self.links()):
            app_dir = self.app_dir(app_id)
            if app_dir is not None:
                out.append(self.summary(app_id, app_dir))
        out.sort(key=lambda r: r.submitted_at or datetime.min)
        return out


def when(value: object) -> datetime | None:
    """A time recorded as seconds since the epoch, or None."""
    return datetime.fromtimestamp(value) if isinstance(value, (int, float)) else None


def state_of(name: str) -> AppState:
    try:
        return AppState[name]
    except KeyError:
        return AppState.UNKNOWN


def describe_response(
    app_id: str,
    app_dir: str,
    state: Mapping[str, Any],
    roles_statuses: list[RoleStatus],
    app: AppDef | None = None,
) -> DescribeAppResponse:
    """What the app's state says of it, as ``describe`` answers (with ``app``, the AppDef
    its request holds); ``statuses`` answers its ``to_status()``."""
    return DescribeAppResponse(
        app_id=app_id,
        state=state_of(state.get("state", "UNKNOWN")),
        num_restarts=int(state.get("num_restarts", 0)),
        num_preemptions=int(state.get("num_preemptions", 0)),
        msg=state.get("msg", ""),
        structured_error_msg=state.get("structured_error_msg", ""),
        roles_statuses=roles_statuses,
        ui_url=f"file://{app_dir}",
        roles=list(app.roles) if app else [],
        app=app,
    )


def replica_status(role: str, replica_id: int, rec: Mapping[str, Any]) -> ReplicaStatus:
    """A replica's status from its entry in the app's state (empty: not started yet)."""
    return ReplicaStatus(
        id=replica_id,
        state=state_of(rec.get("state", "PENDING")),
        role=role,
        hostname=socket.gethostname() if rec.get("pid") else "",
        exit_code=rec.get("exit_code"),
        structured_error_msg=rec.get("error", ""),
        attempt=int(rec.get("attempt") or 1),
    )
