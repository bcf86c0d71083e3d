"""Slurm job arrays: many trials of one app as ONE ``sbatch --array`` job.

One trial is made into the batch script the slurm scheduler would submit for it alone
(``SlurmScheduler.submit_dryrun``); the array's script is that script with its header,
setup, launch and role functions written once, and only each trial's own command and
environment (made by the shared replica helper) picked by ``$SLURM_ARRAY_TASK_ID``: what
every trial exports alike is written once, so the script grows by a few lines a trial. Trial
``i`` of array job ``A`` is the app ``A_i``: the id Slurm's own commands take
(``sacct -j``, ``scontrol show job``, ``scancel``), and the name of its log files.

Describing every task of an array costs one ``sacct`` call (``squeue`` answers only for
tasks accounting has not recorded yet, or when it is off).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from torchx.schedulers._slurm_commands import SlurmError, run
from torchx.schedulers._slurm_parse import app_state, exit_code, lead_component
from torchx.schedulers._slurm_script import (
    RoleParts,
    array_script,
    make_script,
    role_parts,
    script_shape,
)
from torchx.schedulers.slurm_scheduler import SlurmBatchRequest
from torchx.specs import AppDef, AppDryRunInfo, AppState, SpecsError, is_terminal, validate_app

_TASK = re.compile(r"^(?P<job>\d+)_(?P<index>\d+)$")
# a job, or one component of a heterogeneous job (JOB+OFFSET)
_JOB = re.compile(r"^(?P<job>\d+)(?:\+(?P<offset>\d+))?$")
_PENDING_RANGE = re.compile(r"^(?P<job>\d+)_\[(?P<ranges>[^\]]*)\]$")
# a step of a task or job: A_I.batch, A_I.0, J+1.extern
_STEP = re.compile(r"^(?P<owner>[^.]+)\.(?P<step>[^.]+)$")


@dataclass(frozen=True)
class ArrayTask:
    """What Slurm says of one task of an array: ``A_i``'s state and exit code, and
    whether it was ever given nodes (``started``: False for one cancelled while pending)."""

    app_id: str
    state: AppState
    exit_code: int | None = None
    slurm_state: str = ""
    started: bool = True


def index_spec(indices: Sequence[int], parallel: int = 0) -> str:
    """``--array``'s value: ``0-5``, ``1,3-4``, with ``%K`` when at most K run at once."""
    if not indices:
        raise SpecsError("array indices", [], "give at least one trial")
    ordered = sorted(set(indices))
    parts = []
    start = prev = ordered[0]
    for i in [*ordered[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    spec = ",".join(parts)
    if 0 < parallel < len(ordered):
        spec += f"%{parallel}"
    return spec


def _shape_difference(app: AppDef, first: AppDef) -> str:
    """What ``app`` asks Slurm for that ``first`` does not, in sbatch's words."""
    lines = set(make_script(app, {}, "").splitlines())
    other = set(make_script(first, {}, "").splitlines())
    diff = sorted(ln.removeprefix("#SBATCH ") for ln in lines ^ other if ln.startswith("#SBATCH"))
    return " ".join(diff) or "roles or retries"


def array_request(
    first: AppDryRunInfo[SlurmBatchRequest],
    first_index: int,
    trials: Mapping[int, AppDef],
    parallel: int,
    name: str,
    sweep_id: str = "",
) -> AppDryRunInfo[SlurmBatchRequest]:
    """One array request running trial ``first_index`` and ``trials`` (trial index -> its
    app), at most ``parallel`` at once (0: no limit); the job's comment names ``sweep_id``.

    ``first`` is the single-app request of trial ``first_index`` (``submit_dryrun``): the
    array is that request, its run options, ``#SBATCH`` header and role functions written
    once, and only each trial's own command and environment picked by
    ``$SLURM_ARRAY_TASK_ID``. Each trial's app is checked and made into its commands and
    exports once here; trials must ask Slurm for the same resources, since one array is one
    request."""
    app0 = first.app
    if app0 is None:
        raise SpecsError("first", first, "make it with SlurmScheduler.submit_dryrun")
    shape = script_shape(app0)
    parts: dict[int, list[RoleParts]] = {}
    quoted: dict[str, str] = {}
    for index in sorted({first_index, *trials}):
        app = app0 if index == first_index else trials[index]
        if app is not app0:
            # all that ``check_roles`` refuses, and more (``role_parts`` relies on it)
            validate_app(app)
            if script_shape(app) != shape:
                raise SpecsError(
                    f"sweep trial {index}",
                    _shape_difference(app, app0),
                    f"asks Slurm for other resources or options than trial {first_index}; one "
                    "array is one request: sweep arguments that leave resources alone, or use "
                    "a scheduler without arrays",
                )
        parts[index] = role_parts(app, quoted)
    spec = index_spec(list(parts), parallel)
    script = array_script(app0, first.cfg or {}, name, spec, parts, sweep_id)
    info = AppDryRunInfo(replace(first.request, script=script), str)
    info.app = app0
    info.cfg = first.cfg
    info.scheduler = first.scheduler
    return info


def max_array_size() -> int | None:
    """The cluster's ``MaxArraySize`` (array indices must stay below it), or None when
    ``scontrol`` cannot say."""
    try:
        proc = run(["scontrol", "show", "config"])
    except SlurmError:
        return None
    if proc.returncode != 0:
        return None
    m = re.search(r"^MaxArraySize\s*=\s*(\d+)", proc.stdout, re.MULTILINE)
    return int(m.group(1)) if m else None


def check_array_size(indices: Sequence[int], limit: int | None) -> None:
    """Refuse indices the cluster's ``MaxArraySize`` does not allow, naming the limit."""
    if limit is None or not indices:
        return
    top = max(indices)
    if top >= limit:
        raise SpecsError(
            "sweep",
            f"{len(indices)} trials",
            f"the largest array index, {top}, is not below this cluster's MaxArraySize="
            f"{limit}; sweep fewer values (or ask the Slurm admin to raise MaxArraySize)",
        )


def _expand(ranges: str) -> list[int]:
    out: list[int] = []
    for part in ranges.split("%", 1)[0].split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out += range(int(lo), int(hi or lo) + 1)
    return out


def _tasks_from(rows: list[tuple[str, str, str, bool]], into: dict[str, ArrayTask]) -> None:
    """Rows of (job id, Slurm state, exit code, whether it was given nodes); a step's
    rows (``A_I.batch``, ``A_I.0``) give the exit code of a job that ended otherwise than
    well, where its own row says 0."""
    # each job's components, by offset: (Slurm state, exit code, given nodes, own id)
    jobs: dict[str, dict[int, tuple[str, str, bool, str]]] = {}
    # each task's or component's steps' exit codes, the batch script's first
    step_codes: dict[str, list[str]] = {}
    for job_id, state, code, started in rows:
        if m := _STEP.match(job_id):
            codes = step_codes.setdefault(m.group("owner"), [])
            if m.group("step") == "batch":
                codes.insert(0, code)
            elif m.group("step") != "extern":
                codes.append(code)
        elif _TASK.match(job_id):
            # accounting's 0:0 of a task never started is no exit code either
            ended = _ended_code(state, code) if started else None
            into[job_id] = ArrayTask(job_id, app_state(state), ended, state, started)
        elif m := _JOB.match(job_id):
            offset = int(m.group("offset") or 0)
            jobs.setdefault(m.group("job"), {})[offset] = (state, code, started, job_id)
        elif m := _PENDING_RANGE.match(job_id):
            # tasks still folded into their array's pending record were never given nodes
            for i in _expand(m.group("ranges")):
                tid = f"{m.group('job')}_{i}"
                into.setdefault(tid, ArrayTask(tid, app_state(state), None, state, False))
    owners = {t: t for t in into}
    for job, comps in jobs.items():
        state, code, started, own_id = comps[lead_component({k: c[0] for k, c in comps.items()})]
        into[job] = ArrayTask(job, app_state(state), _ended_code(state, code), state, started)
        owners[job] = own_id
    for task_id, own_id in owners.items():
        task = into[task_id]
        if task.exit_code == 0 and task.state != AppState.SUCCEEDED:
            into[task_id] = replace(task, exit_code=_step_code(step_codes.get(own_id, [])))


def _step_code(codes: list[str]) -> int | None:
    """The exit code of a job whose own accounting row says 0:0 although it did not end
    well (``scancel`` and a time limit record the signal on its steps, not on the job):
    its batch script's, else its first step's that is not 0, as the job's own status reads
    it (``0:15``, killed by SIGTERM: 143). None with no step recorded: the job's own 0 is
    then no exit code (it would read as a success)."""
    if not codes:
        return None
    return next((c for c in map(exit_code, codes) if c), 0)


def _sacct_rows(text: str) -> list[tuple[str, str, str, bool]]:
    """``sacct --parsable2 --noheader --format=JobID,State,ExitCode,AllocNodes`` output as
    rows for ``_tasks_from``."""
    rows = [ln.split("|", 3) for ln in text.splitlines() if ln.count("|") == 3]
    # a job never given nodes (cancelled while pending) was allocated 0 of them
    return [(r[0], r[1], r[2], r[3].strip() != "0") for r in rows]


def _ended_code(state: str, code: str) -> int | None:
    # accounting prints 0:0 for a job that has not ended: that is no exit code yet
    return exit_code(code) if is_terminal(app_state(state)) else None


def describe_tasks(
    task_ids: Sequence[str], array_jobs: Sequence[str], use_sacct: bool | None = None
) -> dict[str, ArrayTask]:
    """The state of each task ``A_i`` in ``task_ids`` of the arrays ``array_jobs``: one
    ``sacct`` for all of them, and one ``squeue`` only for tasks accounting lacks.
    ``array_jobs`` may also name jobs and tasks themselves (``12``, ``12_3``): each is
    then in ``task_ids`` too."""
    found: dict[str, ArrayTask] = {}
    jobs = ",".join(array_jobs)
    if not jobs:
        return found
    if use_sacct is not False:
        proc = run(
            [
                "sacct",
                "--parsable2",
                "--noheader",
                # every step too: a cancelled task's signal is on its steps alone
                "--format=JobID,State,ExitCode,AllocNodes",
                f"--jobs={jobs}",
            ]
        )
        if proc.returncode == 0:
            _tasks_from(_sacct_rows(proc.stdout), found)
        elif use_sacct:
            raise SlurmError(f"sacct failed: {proc.stderr.strip() or proc.returncode}")
    if all(t in found for t in task_ids):
        return found
    proc = run(
        ["squeue", f"--jobs={jobs}", "--array", "--states=all", "--noheader", "--format=%i|%T|%N"]
    )
    if proc.returncode == 0:
        live: dict[str, ArrayTask] = {}
        rows2 = [ln.split("|", 2) for ln in proc.stdout.splitlines() if ln.count("|") == 2]
        # a job never given nodes has an empty node list
        _tasks_from([(r[0].strip(), r[1].strip(), "", bool(r[2].strip())) for r in rows2], live)
        for task, st in live.items():
            found.setdefault(task, st)
    return found


def cancel_arrays(array_jobs: Sequence[str]) -> None:
    """``scancel`` every task of the arrays, in one call; ended ones are left alone."""
    if not array_jobs:
        return
    proc = run(["scancel", *array_jobs])
    if proc.returncode != 0 and "already completed" not in proc.stderr.lower():
        raise SlurmError(f"scancel {' '.join(array_jobs)} failed: {proc.stderr.strip()}")


__all__ = [
    "ArrayTask",
    "array_request",
    "cancel_arrays",
    "check_array_size",
    "describe_tasks",
    "index_spec",
    "max_array_size",
]
