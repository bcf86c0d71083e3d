"""App and replica states, and the status a scheduler reports."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any


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

    def __repr__(self) -> str:
        return f"{self.name} ({self.value})"


# A replica goes through the same states as its app.
ReplicaState = AppState

_TERMINAL = frozenset({AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED})
_STARTED = _TERMINAL | {AppState.RUNNING}

# What pytorch/torchx writes for "no structured error message".
NONE = "<NONE>"


def is_terminal(state: AppState) -> bool:
    return state in _TERMINAL


def is_started(state: AppState) -> bool:
    """Whether the app has reached RUNNING (or ended)."""
    return state in _STARTED


@dataclass
class ReplicaStatus:
    id: int
    state: AppState
    role: str
    hostname: str = ""
    structured_error_msg: str = ""
    # After 0.7's fields, so that 0.7's positional calls still bind as they did.
    exit_code: int | None = None
    # Which start of the replica this is: 1, then one more on each restart.
    attempt: int = 1


@dataclass
class RoleStatus:
    role: str
    replicas: list[ReplicaStatus] = field(default_factory=list)


class AppStatusError(RuntimeError):
    """Raised by ``AppStatus.raise_for_status`` when the app did not succeed."""

    def __init__(self, status: AppStatus, *args: object) -> None:
        self.status = status
        # 0.7's words, which callers match in logs and tests
        super().__init__(*(args or (f"job did not succeed:\n{status.format()}",)))


@dataclass
class AppStatus:
    """What a scheduler knows about an app right now."""

    state: AppState
    num_restarts: int = 0
    msg: str = ""
    structured_error_msg: str = ""
    ui_url: str | None = None
    roles: list[RoleStatus] = field(default_factory=list)
    # Times the app was requeued after a preemption or at its own request: a requeue is
    # not a failure, so it is counted apart from num_restarts.
    num_preemptions: int = 0

    def is_terminal(self) -> bool:
        return is_terminal(self.state)

    def raise_for_status(self) -> None:
        """Raise AppStatusError unless the app has SUCCEEDED (a running app has not)."""
        if self.state != AppState.SUCCEEDED:
            raise AppStatusError(self)

    def format(self, filter_roles: list[str] | None = None) -> str:
        """What ``torchx status`` prints: the app's fields, then one line per replica.

        The layout is pytorch/torchx's, so scripts that read it keep working, with one
        difference: the error is shown once, under ``Structured Error Msg`` (the app's,
        else the first failed replica's), and every replica is one line, with its attempt
        once it was restarted. ``filter_roles`` keeps only the named roles.
        """
        roles = [r for r in self.roles if not filter_roles or r.role in filter_roles]
        replica_lines = []
        first_error = ""
        for role in roles:
            for r in sorted(role.replicas, key=lambda rep: rep.id):
                marker = "*" if r.id == 0 else " "  # a role's first replica starts its block
                line = f" {marker}{r.role}[{r.id}]:{r.state.name}"
                if r.exit_code is not None:
                    line += f" (exitcode: {r.exit_code})"
                if r.attempt > 1:
                    line += f" attempt={r.attempt}"
                if r.hostname:
                    line += f" host={r.hostname}"
                replica_lines.append(line)
                if r.state == AppState.FAILED and r.structured_error_msg and not first_error:
                    first_error = f"{r.role}[{r.id}]: {r.structured_error_msg}"
        roles_text = "".join("\n" + ln for ln in replica_lines)
        error = self.structured_error_msg or first_error
        # shown once the app was requeued: the layout of apps never requeued is unchanged
        preemptions = (
            f"    Num Preemptions: {self.num_preemptions}\n" if self.num_preemptions else ""
        )
        return (
            "AppStatus:\n"
            f"    State: {self.state.name}\n"
            f"    Num Restarts: {self.num_restarts}\n"
            f"{preemptions}"
            f"    Roles: {roles_text}\n"
            f"    Msg: {self.msg}\n"
            f"    Structured Error Msg: {error or NONE}\n"
            f"    UI URL: {self.ui_url}\n"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data (states by name), as ``repr`` and ``--json`` show it."""
        return {
            "state": self.state.name,
            "num_restarts": self.num_restarts,
            "num_preemptions": self.num_preemptions,
            "msg": self.msg,
            "structured_error_msg": self.structured_error_msg or NONE,
            "ui_url": self.ui_url,
            "roles": [
                {
                    "role": role.role,
                    "replicas": [
                        {**dataclasses.asdict(r), "state": r.state.name} for r in role.replicas
                    ],
                }
                for role in self.roles
            ],
        }

    def __repr__(self) -> str:
        # pytorch/torchx prints an AppStatus as a YAML document. PyYAML is not a
        # dependency of torchx-specs: without it the same data is written as JSON,
        # which YAML readers accept too.
        data = {"AppStatus": {**self.to_dict(), "state": repr(self.state)}}
        try:
            import yaml
        except ImportError:
            import json

            return json.dumps(data, indent=2)
        return str(yaml.safe_dump(data, sort_keys=True))
