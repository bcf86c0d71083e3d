"""App and replica states, and the status a scheduler reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class AppState(IntEnum):
    """Lifecycle of an app. SUCCEEDED, FAILED and CANCELLED are terminal."""

    UNSUBMITTED = 0
    SUBMITTED = 1
    PENDING = 2
    RUNNING = 3
    SUCCEEDED = 4
    FAILED = 5
    CANCELLED = 6
    UNKNOWN = 7

    def __str__(self) -> str:
        return self.name


_TERMINAL = frozenset({AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED})


def is_terminal(state: AppState) -> bool:
    return state in _TERMINAL


@dataclass
class ReplicaStatus:
    id: int
    state: AppState
    role: str
    hostname: str = ""
    exit_code: int | None = None
    structured_error_msg: str = ""


@dataclass
class RoleStatus:
    role: str
    replicas: list[ReplicaStatus] = field(default_factory=list)


class AppStatusError(RuntimeError):
    """Raised by ``AppStatus.raise_for_status`` for a failed or cancelled app."""

    def __init__(self, status: AppStatus) -> None:
        self.status = status
        super().__init__(status.format())


@dataclass
class AppStatus:
    """What a scheduler knows about an app right now."""

    state: AppState
    num_restarts: int = 0
    msg: str = ""
    structured_error_msg: str = ""
    ui_url: str | None = None
    roles: list[RoleStatus] = field(default_factory=list)

    def is_terminal(self) -> bool:
        return is_terminal(self.state)

    def raise_for_status(self) -> None:
        """Raise AppStatusError unless the app is still going or has succeeded."""
        if self.state in (AppState.FAILED, AppState.CANCELLED, AppState.UNKNOWN):
            raise AppStatusError(self)

    def format(self) -> str:
        """A readable, multi-line description (what ``torchx status`` prints)."""
        lines = [f"State: {self.state.name}"]
        if self.num_restarts:
            lines.append(f"Restarts: {self.num_restarts}")
        if self.msg:
            lines.append(f"Message: {self.msg}")
        if self.ui_url:
            lines.append(f"UI: {self.ui_url}")
        for role in self.roles:
            lines.append(f"Role {role.role}:")
            for r in role.replicas:
                code = "" if r.exit_code is None else f" exit_code={r.exit_code}"
                host = f" host={r.hostname}" if r.hostname else ""
                lines.append(f"  {role.role}/{r.id}: {r.state.name}{code}{host}")
                if r.structured_error_msg:
                    lines.extend("    " + ln for ln in r.structured_error_msg.splitlines())
        if self.structured_error_msg and not any(
            r.structured_error_msg for role in self.roles for r in role.replicas
        ):
            lines.append("Error:")
            lines.extend("  " + ln for ln in self.structured_error_msg.splitlines())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()
