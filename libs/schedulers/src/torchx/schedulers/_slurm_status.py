"""Each replica's state, read from what Slurm says of a job and from the job directory.

Slurm keeps one state and one exit code per step (all replicas of a role), so each
replica's own exit record, which torchx's script writes next to the job, says how that
replica ended; Slurm's word stands in while there is none. Also here: why a pending job
waits, and which of Slurm's records are refused submissions rather than jobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from torchx.schedulers._slurm_parse import Component, ExitRecord, app_state, read_exit_record
from torchx.schedulers._slurm_script import log_name
from torchx.specs import AppState, ReplicaStatus, is_terminal

_NO_NODE = ("None assigned", "(null)")


def replica_statuses(
    app_id: str,
    role: str,
    count: int,
    comp: Component,
    job_state: AppState,
    job_dir: str,
    attempt: int | None,
) -> list[ReplicaStatus]:
    """One status per task of the role's step: its own exit record of this attempt
    where the job directory shows it, else what Slurm says of the whole step."""
    step = comp.steps[-1] if comp.steps else None
    step_state = app_state(step.state) if step else app_state(comp.state)
    if step is None and not is_terminal(step_state) and is_terminal(job_state):
        step_state = job_state
    if not is_terminal(job_state) and is_terminal(step_state):
        # A requeued job's steps are its previous run's until this run starts its own.
        step, step_state = None, job_state
    submitted = _submitted(comp.submit)
    out = []
    for k in range(count):
        record = _exit_record(job_dir, app_id, role, k, attempt, submitted)
        if record is None:
            # Slurm keeps one exit code per step: it is this replica's only if alone.
            code = (
                step.exit_code
                if step
                and is_terminal(step_state)
                and (count == 1 or step_state == AppState.SUCCEEDED)
                else None
            )
            host = step.nodes if step else comp.nodes
            # what scontrol says of a job that has no node yet
            host = "" if host.strip() in _NO_NODE else host
            out.append(ReplicaStatus(k, step_state, role, hostname=host, exit_code=code))
            continue
        if record.code == 0:
            rstate = AppState.SUCCEEDED
        elif job_state == AppState.CANCELLED:
            rstate = AppState.CANCELLED
        else:
            rstate = AppState.FAILED
        out.append(ReplicaStatus(k, rstate, role, hostname=record.node, exit_code=record.code))
    return out


def _exit_record(
    job_dir: str, app_id: str, role: str, k: int, attempt: int | None, submitted: float | None
) -> ExitRecord | None:
    """Replica ``k``'s record of this attempt of the job; None while it runs.

    A record of another attempt (before a requeue), or older than the job itself (a job id
    that a reset cluster gave out again), is not this run's and is not read.
    """
    if not job_dir:
        return None
    path = Path(job_dir) / log_name(app_id, role, k, "exit")
    try:
        text = path.read_text()
        written = path.stat().st_mtime
    except OSError:
        # not ended yet, or the job directory is not visible from here
        return None
    record = read_exit_record(text)
    if record is None:
        return None
    if attempt is not None and record.attempt is not None and record.attempt != attempt:
        return None
    # Slurm's times have whole seconds: a record from this job is at most that much older.
    if submitted is not None and written < submitted - 1:
        return None
    return record


def _submitted(text: str) -> float | None:
    """Slurm's ``Submit``/``SubmitTime`` (local time, whole seconds) as a Unix time."""
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def refused(state: str, nodes: str) -> bool:
    """A submission sbatch refused: Slurm keeps a FAILED record that never had a node,
    but the user got an error, not a job id, so it is not listed."""
    return app_state(state) == AppState.FAILED and nodes.strip() in ("", *_NO_NODE)


def pending_reason(state: AppState, comps: Mapping[int, Component]) -> str:
    """Why a pending job waits, in Slurm's words (``Reason=`` of each waiting component)."""
    if state != AppState.PENDING:
        return ""
    reasons = []
    for offset in sorted(comps):
        reason = comps[offset].reason
        if reason and reason != "None" and reason not in reasons:
            reasons.append(reason)
    if not reasons:
        return ""
    return f"waiting in the Slurm queue: Reason={','.join(reasons)}"
