"""What local_docker reads back from the engine: the labels its containers carry, and a
container's inspect data turned into replica states, an app's description and its log lines.
Apart from ``docker_scheduler`` so that the scheduler module holds submission and the engine
calls, and this one the pure functions over what the engine returns."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypedDict

from torchx.schedulers._api import DescribeAppResponse
from torchx.schedulers._rfc3339 import parse_local
from torchx.specs import AppDef, AppState, ReplicaStatus, Role, RoleStatus, is_terminal

LABEL_APP_ID = "torchx.pytorch.org/app-id"
LABEL_APP_NAME = "torchx.pytorch.org/app-name"
LABEL_ROLE = "torchx.pytorch.org/role-name"
LABEL_REPLICA = "torchx.pytorch.org/replica-id"
LABEL_CANCELLED = "torchx.pytorch.org/cancelled"
LABEL_VERSION = "torchx.pytorch.org/version"
# pytorch/torchx 0.7's names for the same things.
LABEL_ROLE_NAME = LABEL_ROLE
LABEL_REPLICA_ID = LABEL_REPLICA

# A container's status -> its replica's state, but for exited and dead ones, whose exit
# code says SUCCEEDED or FAILED.
CONTAINER_STATE: dict[str, AppState] = {
    "created": AppState.PENDING,
    "running": AppState.RUNNING,
    "restarting": AppState.RUNNING,
    "paused": AppState.RUNNING,
}


def _status(attrs: Mapping[str, Any]) -> str:
    return str(attrs.get("State", {}).get("Status", ""))


def _stamped(line: str) -> tuple[datetime | None, str]:
    """A line the engine prefixed with its time (UTC, RFC 3339): (local time, the line)."""
    stamp, _, rest = line.partition(" ")
    t = parse_local(stamp)
    if t is None:
        return None, line
    return t, rest


def _replica_state(attrs: Mapping[str, Any]) -> AppState:
    state = attrs.get("State", {})
    status = state.get("Status", "")
    if status in ("exited", "dead"):
        return AppState.SUCCEEDED if state.get("ExitCode") == 0 else AppState.FAILED
    return CONTAINER_STATE.get(status, AppState.UNKNOWN)


def _stopped_by_cancel(attrs: Mapping[str, Any], cancelled_at: datetime | None) -> bool:
    """Whether a replica that exited non-zero was stopped by a cancel: it finished after the
    cancel's marker was made (cancel makes it before it stops the replicas)."""
    finished = parse_local(attrs.get("State", {}).get("FinishedAt"))
    return cancelled_at is not None and finished is not None and finished >= cancelled_at


def _describe(app_id: str, attrs: list[dict[str, Any]]) -> DescribeAppResponse:
    markers = [a for a in attrs if LABEL_CANCELLED in a["Config"]["Labels"]]
    cancelled = bool(markers)
    cancelled_at = min((t for a in markers if (t := parse_local(a.get("Created")))), default=None)
    replicas = [a for a in attrs if LABEL_CANCELLED not in a["Config"]["Labels"]]
    roles: dict[str, RoleStatus] = {}
    states = []
    restarts = 0
    for a in sorted(replicas, key=lambda a: int(a["Config"]["Labels"].get(LABEL_REPLICA, 0))):
        labels = a["Config"]["Labels"]
        role = labels.get(LABEL_ROLE, "")
        state = _replica_state(a)
        if state == AppState.FAILED and _stopped_by_cancel(a, cancelled_at):
            state = AppState.CANCELLED  # as local_cwd and ray report a cancelled replica
        states.append(state)
        restarts += int(a.get("RestartCount", 0))
        exit_code = (
            a.get("State", {}).get("ExitCode")
            if state.name in ("SUCCEEDED", "FAILED", "CANCELLED")
            else None
        )
        roles.setdefault(role, RoleStatus(role)).replicas.append(
            ReplicaStatus(
                id=int(labels.get(LABEL_REPLICA, 0)),
                state=state,
                role=role,
                hostname=a.get("Config", {}).get("Hostname", ""),
                exit_code=exit_code,
            )
        )
    if AppState.FAILED in states:
        overall = AppState.FAILED
    elif AppState.RUNNING in states or (
        AppState.PENDING in states and AppState.SUCCEEDED in states
    ):
        overall = AppState.RUNNING
    elif AppState.PENDING in states:
        overall = AppState.PENDING
    elif states and all(s == AppState.SUCCEEDED for s in states):
        overall = AppState.SUCCEEDED
    else:
        overall = AppState.UNKNOWN
    if cancelled and overall != AppState.SUCCEEDED:
        overall = AppState.CANCELLED
    failed = [r for rs in roles.values() for r in rs.replicas if r.state == AppState.FAILED]
    msg = ", ".join(f"{r.role}/{r.id} exited with {r.exit_code}" for r in failed)
    if overall == AppState.CANCELLED:
        msg = "cancelled" + (f"; before that {msg}" if msg else "")
    app_roles = _roles_of(replicas)
    app_name = replicas[0]["Config"]["Labels"].get(LABEL_APP_NAME, app_id) if replicas else app_id
    return DescribeAppResponse(
        app_id=app_id,
        state=overall,
        num_restarts=restarts,
        msg=msg,
        roles_statuses=list(roles.values()),
        roles=app_roles,
        app=AppDef(app_name, roles=app_roles) if app_roles else None,
    )


class AppTimes(TypedDict):
    submitted_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None


def run_times(attrs: list[dict[str, Any]], replica: Mapping[str, Any], state: AppState) -> AppTimes:
    """``ListAppResponse``'s times: when ``replica`` was created, when the app's first
    replica started and, once the app has ended, when its last one finished. The engine's
    zero time, written for a container not yet started or finished, reads as None."""

    def stamps(key: str) -> list[datetime]:
        got = (parse_local(a.get("State", {}).get(key)) for a in attrs)
        return [t for t in got if t is not None]

    started, finished = stamps("StartedAt"), stamps("FinishedAt")
    ended = is_terminal(state) and bool(finished)
    return AppTimes(
        submitted_at=parse_local(replica.get("Created")),
        started_at=min(started) if started else None,
        # The engine can date a quick container's finish a moment before its start (the
        # start is written once the start call returns); an app ends after it starts.
        ended_at=max(finished + started) if ended else None,
    )


def _roles_of(replicas: list[dict[str, Any]]) -> list[Role]:
    """The roles as replica 0 of each was created (another process can then address them)."""
    counts: dict[str, int] = {}
    first: dict[str, dict[str, Any]] = {}
    for a in replicas:
        role = a["Config"]["Labels"].get(LABEL_ROLE, "")
        counts[role] = counts.get(role, 0) + 1
        if a["Config"]["Labels"].get(LABEL_REPLICA) == "0":
            first[role] = a["Config"]
    out = []
    for role, config in first.items():
        entrypoint = config.get("Entrypoint") or [""]
        out.append(
            Role(
                role,
                image=config.get("Image", ""),
                entrypoint=entrypoint[0],
                args=[*entrypoint[1:], *(config.get("Cmd") or [])],
                num_replicas=counts[role],
            )
        )
    return out
