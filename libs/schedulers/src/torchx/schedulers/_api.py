"""The contract every scheduler implements, and the answers it gives."""

from __future__ import annotations

import abc
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import ClassVar, Generic, TypeVar

from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    AppStatus,
    CfgVal,
    Role,
    RoleStatus,
    SpecsError,
    is_terminal,
    runopts,
)

T = TypeVar("T")


class Stream(str, Enum):
    """Which output of a replica ``log_iter`` reads."""

    STDOUT = "stdout"
    STDERR = "stderr"
    COMBINED = "combined"


@dataclass(frozen=True)
class SchedulerCapabilities:
    """What a scheduler can do; the CLI and the docs print this as a table."""

    cancel: bool = True
    logs: bool = True
    distributed: bool = True
    describe: bool = True
    workspaces: bool = False
    mounts: bool = False
    elasticity: bool = False

    def as_dict(self) -> dict[str, bool]:
        return {
            "cancel": self.cancel,
            "logs": self.logs,
            "distributed": self.distributed,
            "describe": self.describe,
            "workspaces": self.workspaces,
            "mounts": self.mounts,
            "elasticity": self.elasticity,
        }


@dataclass
class DescribeAppResponse:
    """What a scheduler knows about one app: its state, each replica, and the app itself.

    ``app`` is the AppDef as far as the scheduler can rebuild it (None if it cannot);
    ``roles`` are its roles, kept separately for schedulers that only know those.
    """

    app_id: str
    state: AppState = AppState.UNKNOWN
    num_restarts: int = 0
    msg: str = ""
    structured_error_msg: str = ""
    ui_url: str | None = None
    roles_statuses: list[RoleStatus] = field(default_factory=list)
    roles: list[Role] = field(default_factory=list)
    app: AppDef | None = None

    def to_status(self) -> AppStatus:
        return AppStatus(
            state=self.state,
            num_restarts=self.num_restarts,
            msg=self.msg,
            structured_error_msg=self.structured_error_msg,
            ui_url=self.ui_url,
            roles=self.roles_statuses,
        )


@dataclass
class ListAppResponse:
    """One app in a scheduler's ``list``; the runner fills ``app_handle``."""

    app_id: str
    state: AppState
    name: str = ""
    submitted_at: datetime | None = None
    app_handle: str = ""


class Scheduler(abc.ABC, Generic[T]):
    """Turns AppDefs into requests (``submit_dryrun``) and runs them (``schedule``).

    ``T`` is the scheduler's own request type, shown by dryruns and submitted unchanged.
    Subclasses implement the abstract methods; ``submit`` and ``wait`` come for free.
    """

    capabilities: ClassVar[SchedulerCapabilities] = SchedulerCapabilities()

    def __init__(self, backend: str, session_name: str) -> None:
        self.backend = backend
        self.session_name = session_name

    # -- submission -------------------------------------------------------------------

    @abc.abstractmethod
    def run_opts(self) -> runopts:
        """The run options this scheduler accepts (``-cfg k=v``)."""

    def submit_dryrun(
        self, app: AppDef, cfg: Mapping[str, CfgVal] | None = None
    ) -> AppDryRunInfo[T]:
        """The exact request ``schedule`` would submit; no side effects."""
        resolved = self.run_opts().resolve(cfg)
        info = self._submit_dryrun(app, resolved)
        info.app = app
        info.cfg = resolved
        info.scheduler = self.backend
        return info

    @abc.abstractmethod
    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[T]: ...

    @abc.abstractmethod
    def schedule(self, dryrun_info: AppDryRunInfo[T]) -> str:
        """Submit a request made by ``submit_dryrun``; returns the app id."""

    def submit(self, app: AppDef, cfg: Mapping[str, CfgVal] | None = None) -> str:
        return self.schedule(self.submit_dryrun(app, cfg))

    def with_workspace(
        self, app: AppDef, cfg: Mapping[str, CfgVal], workspace: str
    ) -> tuple[AppDef, dict[str, CfgVal]]:
        """Make ``workspace`` (a local directory) part of what is launched.

        Schedulers without workspace support refuse; those with it return an updated app
        and config.
        """
        raise SpecsError(
            "workspace",
            workspace,
            f"the {self.backend} scheduler does not support workspaces; leave it out",
        )

    # -- inspection -------------------------------------------------------------------

    @abc.abstractmethod
    def describe(self, app_id: str) -> DescribeAppResponse | None:
        """The app's current state, or None if this scheduler does not know it."""

    def exists(self, app_id: str) -> bool:
        return self.describe(app_id) is not None

    @abc.abstractmethod
    def list(self) -> list[ListAppResponse]:
        """The apps this scheduler knows about."""

    @abc.abstractmethod
    def log_iter(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        should_tail: bool = False,
        streams: Stream | None = None,
    ) -> Iterable[str]:
        """Lines (newline kept) printed by replica ``k`` of ``role_name``.

        ``regex`` keeps matching lines; ``since``/``until`` bound them in time;
        ``should_tail`` follows the output until the app ends.
        """

    def wait(self, app_id: str, timeout: float | None = None) -> DescribeAppResponse | None:
        """Block until the app is terminal or ``timeout`` seconds pass; its last description.

        This generic version polls with a growing interval; schedulers that can be told
        when an app ends override it.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        interval = 0.01
        while True:
            desc = self.describe(app_id)
            if desc is None or is_terminal(desc.state):
                return desc
            if deadline is not None and time.monotonic() >= deadline:
                return desc
            pause = interval if deadline is None else min(interval, deadline - time.monotonic())
            time.sleep(max(pause, 0.0))
            interval = min(interval * 2, 1.0)

    # -- control ----------------------------------------------------------------------

    @abc.abstractmethod
    def cancel(self, app_id: str) -> None:
        """Stop the app; a no-op for an app that already ended."""

    def close(self) -> None:
        """Release what this scheduler object holds (clients, connections)."""

    def __enter__(self) -> Scheduler[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def filter_regex(regex: str | None, lines: Iterable[str]) -> Iterator[str]:
    """Lines matching ``regex`` (searched anywhere in the line), or all lines.

    A bad pattern is reported here, before any line is read.
    """
    if regex is None:
        return iter(lines)
    try:
        pattern = re.compile(regex)
    except re.error as e:
        raise SpecsError("regex", regex, f"not a valid regular expression ({e})") from None
    return (line for line in lines if pattern.search(line))


__all__ = [
    "DescribeAppResponse",
    "ListAppResponse",
    "Scheduler",
    "SchedulerCapabilities",
    "Stream",
    "filter_regex",
]
