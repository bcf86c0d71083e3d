"""What the API server's Jobs and pods say about an app: its state and each replica's,
and its log lines without their timestamps."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from typing import Any, TypeVar

from torchx.schedulers._api import (
    DescribeAppResponse,
)
from torchx.schedulers._kubernetes_manifests import (
    BACKEND,
    CANCELLED_ANNOTATION,
    LABEL_REPLICA,
    LABEL_ROLE,
)
from torchx.schedulers._rfc3339 import local_time, parse_utc
from torchx.specs import (
    AppState,
    ReplicaStatus,
    Role,
    RoleStatus,
    make_app_handle,
)

K = TypeVar("K")


def untimestamp(lines: Iterable[str], until: datetime | None) -> Iterator[str]:
    for _, line in stamped(lines, until):
        yield line


def stamped(lines: Iterable[str], until: datetime | None) -> Iterator[tuple[datetime | None, str]]:
    """``(time, line)`` of log lines that Kubernetes prefixed with their time
    (``timestamps=True``), up to ``until``; the time is this machine's local time."""
    for line in lines:
        stamp, _, rest = line.partition(" ")
        t = parse_utc(stamp)
        if t is None:
            # no time: a later piece of a line over MAX_LINE_BYTES (see ``decoded_lines``)
            yield None, line
            continue
        if until is not None and t > until.astimezone(timezone.utc):
            return
        yield local_time(t), rest


VOLCANO_STATES = {
    "Pending": AppState.PENDING,
    "Inqueue": AppState.SUBMITTED,
    "Running": AppState.RUNNING,
    "Restarting": AppState.RUNNING,
    "Completing": AppState.RUNNING,
    "Completed": AppState.SUCCEEDED,
    "Terminating": AppState.FAILED,
    "Terminated": AppState.FAILED,
    "Failed": AppState.FAILED,
    "Aborting": AppState.CANCELLED,
    "Aborted": AppState.CANCELLED,
}


POD_PHASES = {
    "Pending": AppState.PENDING,
    "Running": AppState.RUNNING,
    "Succeeded": AppState.SUCCEEDED,
    "Failed": AppState.FAILED,
    "Unknown": AppState.UNKNOWN,
}
# Where each controller records a pod's replica index (Volcano also ends the pod's name in it).
_INDEX_KEYS = (LABEL_REPLICA, "volcano.sh/task-index", "batch.kubernetes.io/job-completion-index")


def _pod_index(pod: Mapping[str, Any]) -> int | None:
    meta = pod.get("metadata") or {}
    for source in (meta.get("annotations") or {}, meta.get("labels") or {}):
        for key in _INDEX_KEYS:
            if str(source.get(key, "")).isdigit():
                return int(source[key])
    tail = str(meta.get("name", "")).rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _attempt_order(pod: Mapping[str, Any]) -> tuple[str, bool, str]:
    """Sorts a replica's pods oldest attempt first.

    creationTimestamp has whole seconds only, so a retry made within the second of its
    failed predecessor ties with it. A Job runs one pod at a time: of two such pods the one
    that has not ended is the newer, and of two ended ones the one that started later.
    Attempts that began and ended within one second cannot be told apart by any client.
    """
    created = str((pod.get("metadata") or {}).get("creationTimestamp") or "")
    status = pod.get("status") or {}
    ended = status.get("phase") in ("Succeeded", "Failed")
    return created, not ended, str(status.get("startTime") or "")


def newest_pods(
    keyed: Iterable[tuple[K | None, Mapping[str, Any]]],
) -> dict[K, Mapping[str, Any]]:
    """The newest pod of each key, from ``(key, pod)`` pairs (a None key: the pod is left
    out). A retried replica leaves its failed pods behind: the latest one speaks for it."""
    newest: dict[K, Mapping[str, Any]] = {}
    for k, pod in keyed:
        if k is None:
            continue
        seen = newest.get(k)
        if seen is None or _attempt_order(pod) >= _attempt_order(seen):
            newest[k] = pod
    return newest


def not_started(pod: Mapping[str, Any]) -> bool:
    """The pod waits to be placed, or for its image or containers: nothing logged yet."""
    return str((pod.get("status") or {}).get("phase") or "Pending") == "Pending"


def pod_outcome(pod: Mapping[str, Any]) -> tuple[AppState, int | None, str]:
    """The pod's state, its container's exit code once it ended, and what the kubelet said
    of a non-zero exit (OOMKilled, Error, ... and its message if any)."""
    status = pod.get("status") or {}
    state = POD_PHASES.get(str(status.get("phase", "")), AppState.UNKNOWN)
    code: int | None = None
    msg = ""
    for cs in status.get("containerStatuses") or []:
        ended = (cs.get("state") or {}).get("terminated")
        if ended is not None:
            code = int(ended.get("exitCode", 0))
            if code != 0:
                msg = ": ".join(str(w) for w in (ended.get("reason"), ended.get("message")) if w)
    return state, code, msg


def replica_key(pod: Mapping[str, Any]) -> tuple[str, int] | None:
    """``(role, replica index)`` of a pod of this scheduler's, else None."""
    role = ((pod.get("metadata") or {}).get("labels") or {}).get(LABEL_ROLE)
    index = _pod_index(pod)
    return None if role is None or index is None else (str(role), index)


def _apply_pods(roles: list[RoleStatus], pods: Iterable[Mapping[str, Any]]) -> None:
    """Per-replica state, hostname and exit code from each replica's newest pod."""
    newest = newest_pods((replica_key(pod), pod) for pod in pods)
    for rs in roles:
        for replica in rs.replicas:
            pod = newest.get((rs.role, replica.id))
            if pod is None:
                continue
            state, code, msg = pod_outcome(pod)
            replica.state = state
            replica.hostname = (pod.get("spec") or {}).get("hostname") or pod["metadata"]["name"]
            if code is not None:
                replica.exit_code = code
                if msg:
                    replica.structured_error_msg = msg


def role_of(name: str, template: Mapping[str, Any], replicas: int) -> Role:
    """The role as far as its pod template tells (image and command line)."""
    container = ((template.get("spec") or {}).get("containers") or [{}])[0]
    command = list(container.get("command") or [])
    return Role(
        name,
        image=str(container.get("image") or ""),
        entrypoint=command[0] if command else "",
        args=command[1:] + list(container.get("args") or []),
        num_replicas=replicas,
    )


def why_pending(
    desc: DescribeAppResponse, pods: Iterable[Mapping[str, Any]]
) -> DescribeAppResponse:
    """A pending app's ``msg``: the scheduler's own words from each pod it could not place
    (the ``PodScheduled=False`` condition, reason ``Unschedulable``)."""
    if desc.state != AppState.PENDING:
        return desc
    said: list[str] = []
    for pod in pods:
        for cond in (pod.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                text = f"{cond.get('reason') or 'not scheduled'}: {cond.get('message') or ''}"
                text = text.strip().rstrip(":")
                if text not in said:
                    said.append(text)
    if said:
        desc.msg = "waiting for Kubernetes to schedule it: " + "; ".join(said)
    return desc


def describe_volcano(
    app_id: str, vjob: Mapping[str, Any], pods: Iterable[Mapping[str, Any]] = ()
) -> DescribeAppResponse:
    status = vjob.get("status") or {}
    phase = (status.get("state") or {}).get("phase", "")
    roles = []
    for task in vjob.get("spec", {}).get("tasks", []):
        role = task["template"]["metadata"]["labels"].get(LABEL_ROLE, task["name"])
        roles.append(
            RoleStatus(
                role,
                [
                    ReplicaStatus(id=i, state=AppState.UNKNOWN, role=role)
                    for i in range(int(task.get("replicas", 1)))
                ],
            )
        )
    _apply_pods(roles, pods)
    return DescribeAppResponse(
        app_id=app_id,
        roles=[
            role_of(rs.role, task["template"], len(rs.replicas))
            for rs, task in zip(roles, vjob.get("spec", {}).get("tasks", []), strict=True)
        ],
        state=VOLCANO_STATES.get(phase, AppState.UNKNOWN),
        num_restarts=int(status.get("retryCount", 0)),
        msg=(status.get("state") or {}).get("message", ""),
        roles_statuses=roles,
    )


def _job_state(job: Mapping[str, Any]) -> AppState:
    status = job.get("status") or {}
    conds = {c["type"]: c["status"] for c in status.get("conditions") or []}
    if (job["metadata"].get("annotations") or {}).get(CANCELLED_ANNOTATION) == "true":
        return AppState.CANCELLED
    if conds.get("Failed") == "True":
        return AppState.FAILED
    if conds.get("Complete") == "True":
        return AppState.SUCCEEDED
    if status.get("active"):
        return AppState.RUNNING
    return AppState.PENDING


def describe_batch(
    app_id: str, jobs: list[dict[str, Any]], pods: Iterable[Mapping[str, Any]] = (), *, session: str
) -> DescribeAppResponse:
    """One Job per replica: each Job's labels name its role and replica id; ``session`` is
    the one of the app's handle, which a RUNNING app with a failed replica names."""
    by_role: dict[str, dict[int, AppState]] = {}
    templates: dict[str, Mapping[str, Any]] = {}
    restarts = 0
    for job in jobs:
        labels = job["metadata"].get("labels") or {}
        role = labels.get(LABEL_ROLE, job["metadata"]["name"])
        index = str(labels.get(LABEL_REPLICA, "0"))
        # Each failed pod was followed by a retry, except the last one of a Job that failed.
        state = _job_state(job)
        failed = int((job.get("status") or {}).get("failed") or 0)
        restarts += max(failed - (1 if state == AppState.FAILED else 0), 0)
        by_role.setdefault(role, {})[int(index) if index.isdigit() else 0] = state
        templates.setdefault(role, (job.get("spec") or {}).get("template") or {})
    roles = [
        RoleStatus(
            role, [ReplicaStatus(id=i, state=st, role=role) for i, st in sorted(reps.items())]
        )
        for role, reps in by_role.items()
    ]
    _apply_pods(roles, pods)
    for rs in roles:
        for replica in rs.replicas:
            final = by_role[rs.role][replica.id]
            # A finished Job speaks for its replica; while it runs, its newest pod does.
            if final in (AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED):
                replica.state = final
    # From the replicas, not the Jobs: a Job whose pod waits to be scheduled is "active".
    states = {replica.state for rs in roles for replica in rs.replicas}
    overall: AppState = AppState.SUCCEEDED
    # A failed replica ends the app only once no other one runs or waits: the app has not
    # ended while a replica still holds its node, as with a Volcano Job (0.7's default
    # policies) and local_docker; its leftovers are then for ``cancel`` to delete.
    order = (AppState.CANCELLED, AppState.RUNNING, AppState.PENDING, AppState.FAILED)
    for s in (*order, AppState.UNKNOWN):
        if s in states:
            overall = s
            break
    return DescribeAppResponse(
        app_id=app_id,
        state=overall,
        num_restarts=restarts,
        msg=_still_running(make_app_handle(BACKEND, session, app_id), roles, by_role)
        if overall == AppState.RUNNING
        else "",
        roles_statuses=roles,
        roles=[role_of(rs.role, templates[rs.role], len(rs.replicas)) for rs in roles],
    )


def _still_running(
    handle: str, roles: list[RoleStatus], job_states: Mapping[str, Mapping[int, AppState]]
) -> str:
    """Why a RUNNING app may be stuck: replicas whose Job failed (no retry left) while
    others run, which nothing stops but ``cancel``; "" when none failed."""
    failed = [
        r for rs in roles for r in rs.replicas if job_states[rs.role][r.id] == AppState.FAILED
    ]
    if not failed:
        return ""
    first = failed[0]
    code = f" (exit {first.exit_code})" if first.exit_code is not None else ""
    more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
    return (
        f"replica {first.role}/{first.id} FAILED{code}{more}; the app ends when its other "
        f"replicas do, and `torchx cancel {handle}` stops them"
    )


def jobs_without_pods(
    jobs: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]
) -> set[str]:
    """The names of the Jobs none of ``pods`` belongs to (by the Job controller's label)."""
    made = {((p.get("metadata") or {}).get("labels") or {}).get("job-name") for p in pods}
    return {str(j["metadata"]["name"]) for j in jobs} - made


def why_no_pods(
    desc: DescribeAppResponse, bare: set[str], events: Iterable[Any]
) -> DescribeAppResponse:
    """A pending app's ``msg`` when Jobs ``bare`` made no pod: what the Job controller was
    refused (its FailedCreate events: a missing service account, a quota, a pod security
    rule), the first refusal in full and how many Jobs more."""
    if desc.state != AppState.PENDING:
        return desc
    said = sorted(
        {
            (str(e.involved_object.name), " ".join(str(e.message or "").split()))
            for e in events
            if e.involved_object.name in bare
        }
    )
    if said:
        more = len({name for name, _ in said}) - 1
        desc.msg = f"Kubernetes cannot create the pod of Job {said[0][0]}: {said[0][1]}" + (
            f" (and {more} more Job{'s' if more > 1 else ''})" if more else ""
        )
    return desc
