"""Reading Slurm's answers: ``sacct --parsable2`` rows and ``scontrol show job -o`` records.

Both are turned into the same small shape (components of a job, with their steps), so
``describe`` works the same with and without accounting. A line that does not have the
expected form raises ``SlurmOutputError`` quoting it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from torchx.schedulers._errors import SchedulerError
from torchx.schedulers.sweep_names import SWEEP_ID_PATTERN
from torchx.specs import AppState

SACCT_FIELDS = (
    "JobID", "JobName", "State", "ExitCode", "NodeList", "Submit", "Start", "End", "WorkDir",
    "Comment",
)  # fmt: skip
# a job id, or an array task's (A_I); the pending tasks of an array share one row, A_[2-5]
_JOB_ID = re.compile(r"^(?P<job>\d+(?:_\d+)?)(?:\+(?P<offset>\d+))?(?:\.(?P<step>[\w-]+))?$")
_PENDING_TASKS = re.compile(r"^\d+_\[[^\]]*\](?:\.[\w-]+)?$")
_COMMENT_ROLES = re.compile(r"^torchx:roles=(?P<roles>[^;]*)")
# A sweep's array: its sweep right after the roles (``;`` and no space: the user's own
# comment follows ``; ``, so it cannot pass for one).
_COMMENT_SWEEP = re.compile(rf"^torchx:roles=[^;]*;sweep=(?P<sweep>{SWEEP_ID_PATTERN})(;|$)")

_STATES = {
    "PENDING": AppState.PENDING,
    "REQUEUED": AppState.PENDING,
    "REQUEUE_FED": AppState.PENDING,
    "REQUEUE_HOLD": AppState.PENDING,
    "RESIZING": AppState.PENDING,
    "CONFIGURING": AppState.RUNNING,
    "RUNNING": AppState.RUNNING,
    "COMPLETING": AppState.RUNNING,
    "SUSPENDED": AppState.RUNNING,
    "STOPPED": AppState.RUNNING,
    "SIGNALING": AppState.RUNNING,
    "STAGE_OUT": AppState.RUNNING,
    "COMPLETED": AppState.SUCCEEDED,
    "CANCELLED": AppState.CANCELLED,
    "FAILED": AppState.FAILED,
    "TIMEOUT": AppState.FAILED,
    "NODE_FAIL": AppState.FAILED,
    "OUT_OF_MEMORY": AppState.FAILED,
    "BOOT_FAIL": AppState.FAILED,
    "DEADLINE": AppState.FAILED,
    "PREEMPTED": AppState.FAILED,
    "SPECIAL_EXIT": AppState.FAILED,
    "REVOKED": AppState.CANCELLED,
}


class SlurmOutputError(SchedulerError):
    """Slurm printed something this scheduler cannot read; the message quotes it."""

    def __init__(self, command: str, line: str, why: str) -> None:
        super().__init__(
            "slurm",
            f"cannot read {command} output line {line!r}: {why}",
            "check that Slurm's commands on PATH are those of a supported Slurm release",
        )
        self.line = line


def app_state(slurm_state: str) -> AppState:
    """``CANCELLED by 0`` and ``RUNNING+`` style decorations are ignored."""
    return _STATES.get(state_word(slurm_state), AppState.UNKNOWN)


def lead_component(component_states: Mapping[int, str]) -> int:
    """The offset of the component that speaks for a job, given each component's Slurm
    state (a plain job has one, a heterogeneous job several): the first cancelled one,
    else the first."""
    cancelled = [k for k, s in component_states.items() if app_state(s) == AppState.CANCELLED]
    return min(cancelled or component_states)


def job_app_state(component_states: Mapping[int, str]) -> AppState:
    """A job's state from its components' Slurm states: the lead component's."""
    return app_state(component_states[lead_component(component_states)])


def exit_code(text: str) -> int | None:
    """Slurm's ``code:signal``; a signal death reads as 128 + signal, like a shell's."""
    code, _, sig = text.strip().partition(":")
    if not code.isdigit() or (sig and not sig.isdigit()):
        return None
    return 128 + int(sig) if sig and int(sig) else int(code)


def sweep_from_comment(app_id: str, comment: str) -> str:
    """``sweep-ID/INDEX`` of array task ``app_id`` (``JOB_INDEX``) whose job's comment
    names its sweep; "" for any other job."""
    m = _COMMENT_SWEEP.match(comment.strip())
    if m is None:
        return ""
    _, _, index = app_id.partition("_")
    return f"{m.group('sweep')}/{index}" if index.isdigit() else m.group("sweep")


def roles_from_comment(comment: str) -> list[tuple[str, int]]:
    """Role names and replica counts, in component order, from ``torchx:roles=a,b:2``."""
    m = _COMMENT_ROLES.match(comment.strip())
    if m is None:
        return []
    out = []
    for token in m.group("roles").split(","):
        name, _, count = token.strip().partition(":")
        if name:
            out.append((name, int(count) if count.isdigit() and int(count) > 0 else 1))
    return out


@dataclass(frozen=True)
class ExitRecord:
    """What a replica's wrapper wrote when its process ended, in which attempt of the job
    (Slurm's restart count; None in records written before attempts were kept)."""

    code: int
    node: str
    attempt: int | None = None


def read_exit_record(text: str) -> ExitRecord | None:
    """``<exit code> <node> [<attempt>]`` as a replica's wrapper writes it; None when not
    (yet) whole."""
    parts = text.split()
    if not parts or not parts[0].isdigit():
        return None
    node = parts[1] if len(parts) > 1 else ""
    attempt = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else None
    return ExitRecord(int(parts[0]), node, attempt)


def slurm_time(text: str) -> datetime | None:
    """A time as Slurm prints it (``2026-05-01T12:00:00``, local time); None for what is not
    one yet (``Unknown``, ``N/A``, ``None``)."""
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        return None


def state_word(slurm_state: str) -> str:
    """Slurm's own word for a state (``CANCELLED by 0`` -> ``CANCELLED``)."""
    return re.split(r"[\s+]", slurm_state.strip(), maxsplit=1)[0].upper()


def exit_reason(code: int) -> str:
    """How a process ended, for people: ``exited with 3``, ``was killed by SIGKILL``."""
    import signal

    if code > 128:
        try:
            return f"was killed by {signal.Signals(code - 128).name} (exit code {code})"
        except ValueError:
            pass
    return f"exited with {code}"


@dataclass
class Step:
    name: str
    state: str
    exit_code: int | None
    nodes: str


@dataclass
class Component:
    """One job of a heterogeneous job (or the job itself), offset 0 first."""

    job_id: str
    offset: int
    name: str = ""
    state: str = ""
    exit_code: int | None = None
    nodes: str = ""
    submit: str = ""
    # Slurm's Start and End: "Unknown" until they happen (squeue's are estimates until then)
    start: str = ""
    end: str = ""
    comment: str = ""
    workdir: str = ""
    stdout: str = ""
    # why a pending job waits (scontrol's Reason=), "None" once it runs
    reason: str = ""
    # how often Slurm requeued it (scontrol's Restarts=); None where not known
    restarts: int | None = None
    # an array task's own job id (scontrol's JobId of A_I); "" for other jobs, or unknown
    task_job_id: str = ""
    # What scontrol alone shows, read by ``torchx requeue``: Requeue= ("0" for a job
    # submitted --no-requeue), the array task as A_I ("" for other jobs), and StartTime=
    # (while pending, the begin time Slurm holds the job until).
    requeue: str = ""
    array_task: str = ""
    begin: str = ""
    steps: list[Step] = field(default_factory=list)


def parse_sacct(text: str) -> dict[str, dict[int, Component]]:
    """Components by job id then offset, from ``sacct --parsable2 --noheader`` rows."""
    jobs: dict[str, dict[int, Component]] = {}
    n = len(SACCT_FIELDS)
    for line in text.splitlines():
        if not line.strip():
            continue
        # Comment is last so that a '|' inside it cannot shift the other fields.
        parts = line.split("|", n - 1)
        if len(parts) != n:
            raise SlurmOutputError("sacct", line, f"expected {n} '|'-separated fields")
        job_id, name, state, code, nodes, submit, start, end, workdir, comment = parts
        m = _JOB_ID.match(job_id)
        if m is None and _PENDING_TASKS.match(job_id):
            continue
        if m is None:
            raise SlurmOutputError("sacct", line, f"{job_id!r} is not a job or step id")
        job, offset, step = m.group("job"), int(m.group("offset") or 0), m.group("step")
        comps = jobs.setdefault(job, {})
        comp = comps.setdefault(offset, Component(job_id=job, offset=offset))
        if step is None:
            comp.name, comp.state, comp.nodes = name, state, nodes
            comp.exit_code, comp.submit, comp.comment = exit_code(code), submit, comment
            comp.start, comp.end = start, end
            comp.workdir = workdir
        elif step not in ("batch", "extern"):
            comp.steps.append(Step(name, state, exit_code(code), nodes))
    return jobs


def parse_scontrol(text: str) -> dict[int, Component]:
    """Components by offset, from ``scontrol show job -o ID`` (one record a line)."""
    comps: dict[int, Component] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = dict(_key_values(line))
        if "JobId" not in fields or "JobState" not in fields:
            raise SlurmOutputError("scontrol show job", line, "no JobId= or JobState= in it")
        offset = int(fields.get("HetJobOffset", "0") or 0)
        comps[offset] = Component(
            job_id=fields.get("HetJobId", fields["JobId"]),
            offset=offset,
            name=fields.get("JobName", ""),
            state=fields["JobState"],
            exit_code=exit_code(fields.get("ExitCode", "")),
            nodes=fields.get("NodeList", ""),
            submit=fields.get("SubmitTime", ""),
            comment=fields.get("Comment", ""),
            workdir=fields.get("WorkDir", ""),
            stdout=fields.get("StdOut", ""),
            reason=fields.get("Reason", ""),
            restarts=int(fields["Restarts"]) if fields.get("Restarts", "").isdigit() else None,
            task_job_id=fields["JobId"] if fields.get("ArrayJobId") else "",
            requeue=fields.get("Requeue", ""),
            array_task=(
                f"{fields['ArrayJobId']}_{fields.get('ArrayTaskId', '')}"
                if fields.get("ArrayJobId")
                else ""
            ),
            begin=fields.get("StartTime", ""),
        )
    return comps


_KEY = re.compile(r"(?:^|\s)([A-Za-z][\w:/]*)=")


def _key_values(line: str) -> list[tuple[str, str]]:
    """``Key=value`` pairs; a value runs until the next `` Key=`` (values may hold spaces)."""
    marks = list(_KEY.finditer(line))
    out = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(line)
        out.append((m.group(1), line[m.end() : end].strip()))
    return out
