"""A Ray job's state, as torchx reports it: Ray's word on the job and the driver's on each
replica.

The driver (``_ray_direct`` or ``_ray_driver``) prints each replica's output and state as
structured lines in the job's log; ``events`` reads them back and
``describe_response`` joins them with what Ray says of the job itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from torchx.schedulers._api import DescribeAppResponse
from torchx.schedulers._ray_direct import EVENT_PREFIX
from torchx.schedulers._ray_requeue import attempt_of
from torchx.specs import AppState, ReplicaStatus, Role, RoleStatus, is_terminal

JOB_STATES = {
    "PENDING": AppState.PENDING,
    "RUNNING": AppState.RUNNING,
    "SUCCEEDED": AppState.SUCCEEDED,
    "FAILED": AppState.FAILED,
    "STOPPED": AppState.CANCELLED,
}

# A job this torchx did not submit (one of pytorch/torchx 0.7's, or any other Ray job) has no
# roles recorded; as in 0.7 it reads as one role of one replica whose log is the job's log.
UNRECORDED_ROLE = "ray"
ROLES_METADATA_KEY = "torchx_roles"
# What Ray's own message on a job repeats of torchx's bookkeeping: the driver's structured
# lines, and Ray's line naming the entrypoint when that is torchx's driver (it holds the
# driver's whole config); another job's entrypoint line is the user's command and stays.
_DRIVER_MODULE = " -m torchx.schedulers._ray_"


@dataclass
class JobRecord:
    """What the driver reported so far, parsed from the job's log."""

    state: dict[str, Any] = field(default_factory=dict)


def events(lines: Iterable[str], kind: str = "") -> Iterator[dict[str, Any]]:
    """The driver's events among a job log's ``lines`` (only those of ``kind``, "log" or
    "state", when given); other lines (Ray's own) are skipped one at a time, so a streamed
    log is never held whole. The driver writes ``ev`` first in every event (``emit``), so a
    kind is told from a line's start, before any JSON is read, and checked again once read
    (a line repeating the key may match the start and name another kind)."""
    start = EVENT_PREFIX + (f'{{"ev":"{kind}"' if kind else "")
    for line in lines:
        if not line.startswith(start):
            continue
        try:
            event = json.loads(line[len(EVENT_PREFIX) :])
        except ValueError:
            continue  # a line cut short by a killed driver
        if isinstance(event, dict) and (not kind or event.get("ev") == kind):
            yield event


def latest_state(lines: Iterable[str]) -> JobRecord:
    """The driver's last state event among ``lines``, without its log events: what a
    description needs, in memory that does not grow with the log."""
    rec = JobRecord()
    for event in events(lines, "state"):
        rec.state = event
    return rec


def recorded_roles(metadata: dict[str, str] | None) -> dict[str, int]:
    """Each role's replica count as torchx recorded it at submission; a job torchx did not
    submit has one role, ``UNRECORDED_ROLE``, of one replica."""
    recorded = (metadata or {}).get(ROLES_METADATA_KEY)
    if recorded is None:
        return {UNRECORDED_ROLE: 1}
    counts: dict[str, int] = json.loads(recorded)
    return counts


def ray_message(message: str | None) -> str:
    """Ray's message on a job, less the lines torchx's driver wrote for its own use."""
    lines = (message or "").splitlines()
    kept = (
        ln
        for ln in lines
        if not ln.startswith(EVENT_PREFIX)
        and not (ln.startswith("Running entrypoint for job ") and _DRIVER_MODULE in ln)
    )
    return "\n".join(kept).strip()


def describe_response(app_id: str, info: Any, rec: JobRecord, ui_url: str) -> DescribeAppResponse:
    """The app's description from Ray's ``JobDetails`` of its job (``info``) and what the
    driver reported in the job's log (``rec``)."""
    job_state = JOB_STATES.get(str(info.status.value), AppState.UNKNOWN)
    reported = rec.state
    state = job_state
    if job_state == AppState.RUNNING and reported.get("state") == "PENDING":
        state = AppState.PENDING  # the placement group waits for resources
    roles: dict[str, RoleStatus] = {}
    counts = recorded_roles(info.metadata)
    for name, n in counts.items():
        roles[name] = RoleStatus(
            name,
            [ReplicaStatus(id=k, state=AppState.PENDING, role=name) for k in range(n)],
        )
    for rep in reported.get("replicas", []):
        role = roles.setdefault(rep["r"], RoleStatus(rep["r"]))
        replica_state = AppState[rep["state"]]
        if is_terminal(job_state) and not is_terminal(replica_state):
            # The driver was stopped before it could report this replica's end.
            replica_state = job_state
        status = ReplicaStatus(
            id=rep["k"],
            state=replica_state,
            role=rep["r"],
            hostname=rep.get("host", ""),
            exit_code=rep.get("exit"),
        )
        if rep["k"] < len(role.replicas):
            role.replicas[rep["k"]] = status
        else:
            role.replicas.append(status)
    unrecorded = ROLES_METADATA_KEY not in (info.metadata or {})
    if (is_terminal(job_state) or unrecorded) and not reported.get("replicas"):
        for role in roles.values():
            for r in role.replicas:
                r.state = state
    ray_msg = ray_message(info.message)
    error = str(reported.get("error", ""))
    if job_state == AppState.FAILED and not error:
        error = ray_msg
    # The driver's account of a failure (which replica, its exit code, its stderr's last
    # lines) is what the user needs; Ray's repeats the driver's log.
    msg = error if job_state == AppState.FAILED and error else ray_msg
    if state == AppState.PENDING:
        why = str(reported.get("reason") or "") or msg
        msg = f"waiting for Ray: {why}" if why else "waiting for Ray"
    return DescribeAppResponse(
        app_id=app_id,
        state=state,
        num_restarts=int(reported.get("restarts", 0)),
        num_preemptions=attempt_of(info.metadata),
        msg=msg,
        structured_error_msg=error,
        ui_url=ui_url,
        roles_statuses=list(roles.values()),
        # What `torchx log HANDLE` walks: each role and its replica count, as submitted
        # (the job's command is not kept, so the roles carry names and counts only).
        roles=[Role(name, image="", num_replicas=len(r.replicas)) for name, r in roles.items()],
    )


__all__ = [
    "JOB_STATES",
    "ROLES_METADATA_KEY",
    "UNRECORDED_ROLE",
    "JobRecord",
    "describe_response",
    "events",
    "latest_state",
    "ray_message",
    "recorded_roles",
]
