"""Submitting a sweep and answering for it by one handle (``SCHEDULER://SESSION/sweep-ID``).

Three ways to run the trials, chosen by the scheduler:

- **array** (Slurm): the first trial is dry-run as an app of its own, and every trial's
  commands join that request as ONE ``sbatch --array`` job
  (``torchx.schedulers.slurm_array``); Slurm itself keeps at most ``parallel`` tasks
  running, and one ``sacct`` describes them all.
- **indexed** (Kubernetes 1.29+, single-replica trials): ONE Indexed Job whose pods pick
  their trial's command and environment by completion index
  (``torchx.schedulers.kubernetes_indexed``); the Job keeps at most ``parallel`` pods
  running, and one pod list call by the sweep's label describes every trial.
- **local group** (local_cwd, local_dir): every trial is an app of its own, all submitted
  at once to ONE supervised group (``LocalScheduler.schedule_group``), a process that
  runs at most ``parallel`` of them at a time.
- **group** (every other scheduler): a small detached process (``_sweep_group``) submits
  one app per trial through the runner, keeping at most ``parallel`` of them running.

Either way each trial is the component called with its arguments, its roles carry
``TORCHX_SWEEP_ID``, ``TORCHX_SWEEP_INDEX``, ``TORCHX_SWEEP_ARGS`` (JSON) and
``TORCHX_SWEEP_ARG_<NAME>``, and the trackers record the sweep as its parent run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torchx.runner._sweep import (
    ENV_SWEEP_ARG_PREFIX,
    ENV_SWEEP_ARGS,
    ENV_SWEEP_ID,
    ENV_SWEEP_INDEX,
    Sweep,
    SweepError,
    check_sweep,
)
from torchx.runner._sweep_kubernetes import (
    delete_trials,
    is_kubernetes,
    kubernetes_mode,
    trial_cfg,
    trial_pod_states,
)
from torchx.runner._sweep_lock import busy, changing, resumer, resuming
from torchx.runner._sweep_record import (
    SweepRecord,
    TrialRecord,
    is_sweep_id,
    load,
    record_path,
    save,
    sweeps_dir,
)
from torchx.runner._tracking import with_env
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    AppStatus,
    CfgVal,
    SpecsError,
    is_terminal,
    make_app_handle,
    parse_app_handle,
)

if TYPE_CHECKING:
    from torchx.runner._runner import Runner
    from torchx.schedulers.local_scheduler import LocalScheduler
    from torchx.specs import ComponentSchema

ARRAY_BACKENDS = ("slurm",)
# How often the group's driver looks at its running trials, by scheduler.
_LOCAL_POLL_S = 0.05
_REMOTE_POLL_S = 2.0
_LOCAL = ("local_cwd", "local_dir")
# ``json.dumps(..., sort_keys=True)`` makes a new encoder at each call; a sweep encodes
# every trial's arguments.
_ARGS_JSON = json.JSONEncoder(sort_keys=True)


@dataclass
class TrialStatus:
    """One trial of a sweep. ``attempts`` counts its runs that started, as the app's own
    status does (restarts by ``max_retries`` included, where the scheduler's one status
    query for the sweep says them): 0 while its first run still waits, one more when
    ``--resume`` ran it again."""

    index: int
    args: dict[str, str]
    state: AppState
    attempts: int
    exit_code: int | None
    handle: str | None
    msg: str = ""
    # what the trial recorded as its objective (filled by readers of the trackers)
    objective: float | None = None


@dataclass
class SweepStatus:
    """Every trial of a sweep: its index, arguments, state, attempts and exit code."""

    handle: str
    state: AppState
    mode: str
    trials: list[TrialStatus] = field(default_factory=list)
    # why the sweep is in its state, where its trials alone do not say (a resume running)
    msg: str = ""

    def is_terminal(self) -> bool:
        return is_terminal(self.state)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.trials:
            out[t.state.name] = out.get(t.state.name, 0) + 1
        return out

    def summary(self) -> str:
        """How many trials are in each state: ``1 FAILED, 2 SUCCEEDED``."""
        return ", ".join(f"{n} {s}" for s, n in sorted(self.counts().items()))

    def rank(self, maximize: bool = False) -> None:
        """Order the trials best objective first (trials without one last)."""
        sign = -1.0 if maximize else 1.0
        self.trials.sort(key=lambda t: (t.objective is None, sign * (t.objective or 0.0), t.index))

    def format(self, objective: str = "objective") -> str:
        """A table, one trial a line, as ``torchx status SWEEP`` prints it; ``objective``
        heads the column of the value that ranks the trials."""
        names = sorted({k for t in self.trials for k in t.args}, key=_first_seen(self.trials))
        scored = any(t.objective is not None for t in self.trials)
        head = ["#", *names, *([objective] if scored else []), "state", "attempts", "exit"]
        head.append("handle")
        rows = [
            [
                str(t.index),
                *(t.args.get(n, "") for n in names),
                *([f"{t.objective:g}" if t.objective is not None else ""] if scored else []),
                t.state.name,
                str(t.attempts),
                "" if t.exit_code is None else str(t.exit_code),
                t.handle or "",
            ]
            for t in self.trials
        ]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        lines = [f"Sweep {self.handle}: {self.state.name} (" + self.summary() + ")"]
        if self.msg:
            lines.append(self.msg)
        for r in [head, *rows]:
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        return "\n".join(lines)


def _first_seen(trials: list[TrialStatus]) -> Any:
    order: dict[str, int] = {}
    for t in trials:
        for k in t.args:
            order.setdefault(k, len(order))
    return lambda k: order[k]


@dataclass
class SweepPlan:
    """What submitting a sweep would do: which trials, how, and the one request."""

    record: SweepRecord
    indices: list[int]
    request: AppDryRunInfo[Any]
    why: str
    # every trial's request, where the trials are submitted together (a local group)
    requests: dict[int, AppDryRunInfo[Any]] = field(default_factory=dict)
    # a resume's plan: the sweep's record it was made from, as saved (``_as_saved``)
    resumed_from: str | None = None

    @property
    def handle(self) -> str:
        return self.record.handle

    def __str__(self) -> str:
        return (
            f"# sweep {self.handle}: trials {','.join(map(str, self.indices))} of "
            f"{len(self.record.trials)} ({self.record.mode}: {self.why})\n{self.request}"
        )


def _findable(component: str) -> str:
    """A file component as an absolute path, so the driver and ``--resume`` find it from
    any directory."""
    path, sep, fn = component.partition(":")
    if path.endswith(".py") and os.path.isfile(path):
        return os.path.abspath(path) + sep + fn
    return component


def _new_id() -> str:
    from torchx.schedulers.ids import random_id

    return "sweep-" + random_id(10)


def trial_env(record: SweepRecord, index: int) -> dict[str, str]:
    args = record.trials[index].args
    env = {
        ENV_SWEEP_ID: record.handle,
        ENV_SWEEP_INDEX: str(index),
        ENV_SWEEP_ARGS: _ARGS_JSON.encode(args),
    }
    for name, value in args.items():
        env[ENV_SWEEP_ARG_PREFIX + name.upper()] = value
    return env


def _sweep_of(record: SweepRecord) -> Sweep:
    names: list[str] = []
    for t in record.trials:
        names += [k for k in t.args if k not in names]
    return Sweep(
        record.component,
        tuple(dict(t.args) for t in record.trials),
        tuple(record.base_args),
        record.parallel,
        tuple(names),
    )


def _trial_error(index: int, e: SpecsError) -> SweepError:
    """``e``, said of trial ``index``: its own message (a missing argument's "not given",
    a list of problems) after ``sweep trial N``, with the same field, value and fix."""
    error = SweepError(f"sweep trial {index} {e.field}", e.value, e.expected)
    error.args = (f"sweep trial {index} {e}",)
    return error


def trial_app(
    runner: Runner,
    schema: ComponentSchema,
    record: SweepRecord,
    index: int,
    sweep: Sweep | None = None,
    env: Mapping[str, str] | None = None,
) -> AppDef:
    """Trial ``index``'s app: the component called with its arguments, plus its env (and
    ``env`` on top). ``sweep`` is ``record``'s sweep, where the caller has it already."""
    argv = (sweep or _sweep_of(record)).trial_argv(index)
    try:
        app = runner.component_app(schema, argv)
    except SpecsError as e:
        raise _trial_error(index, e) from None
    for role in app.roles:
        role.image = record.images.get(role.image, role.image)
    return with_env(app, {**trial_env(record, index), **(env or {})})


def plan(
    runner: Runner,
    sweep: Sweep,
    scheduler: str,
    cfg: Mapping[str, CfgVal] | None = None,
    workspace: str | None = None,
    parent_run_id: str | None = None,
    *,
    record: SweepRecord | None = None,
    indices: Sequence[int] | None = None,
    check_limits: bool = True,
) -> SweepPlan:
    """Check the sweep against its component and build what would be submitted.

    ``check_limits`` asks the backend for its limits (Slurm's ``MaxArraySize``) now; when
    False, they are asked only if the backend refuses the request (``submit``)."""
    from torchx.components import get_component

    schema = get_component(sweep.component)
    check_sweep(schema, sweep)
    sched = runner._scheduler(scheduler)
    mode = "array" if sched.backend in ARRAY_BACKENDS else "group"
    why_group = ""
    if record is None:
        record = SweepRecord(
            sweep_id=_new_id(),
            scheduler=scheduler,
            session=runner.name,
            component=_findable(sweep.component),
            base_args=list(sweep.base_args),
            parallel=sweep.parallel,
            mode=mode,
            trials=[TrialRecord(i, dict(t)) for i, t in enumerate(sweep.trials)],
            cfg=dict(cfg or {}),
            workspace=workspace,
            parent_run_id=parent_run_id,
            created=time.time(),
        )
        if workspace:
            from torchx.runner._sweep_workspace import build_workspace_once

            build_workspace_once(runner, schema, record, sweep)
        if sched.backend == "kubernetes":
            record.mode, why_group = kubernetes_mode(
                runner, record, lambda i: trial_app(runner, schema, record, i, sweep)
            )
    todo = list(range(len(record.trials))) if indices is None else sorted(indices)
    if record.mode == "array":
        return _plan_array(runner, schema, record, sweep, todo, check_limits)
    if record.mode == "indexed":
        return _plan_indexed(runner, schema, record, sweep, todo)
    k = record.parallel or len(todo)
    if _local_group(runner, record.scheduler):
        infos = _dryrun_local_group(runner, schema, record, sweep, todo)
        why = (
            f"one supervised group: one local process runs at most {k} trials at once, each "
            f"supervised as an app of its own; trial {todo[0]}'s request:"
        )
        return SweepPlan(record, todo, infos[todo[0]], why, infos)
    # Every trial's app is made now: a component that refuses an argument set fails here.
    apps = {i: trial_app(runner, schema, record, i, sweep) for i in todo}
    first = runner.dryrun(
        apps[todo[0]],
        scheduler,
        trial_cfg(runner, record, todo[0]),
        record.workspace,
        parent_run_id=record.handle,
    )
    why = (
        f"the {sched.backend} scheduler has no job arrays: one app per trial, at most {k} "
        f"running at once, submitted by a local process; trial {todo[0]}'s request:"
    )
    if why_group:
        why = (
            f"one Job per trial, not one Indexed Job, because {why_group}; at most {k} "
            f"running at once, submitted by a local process; trial {todo[0]}'s request:"
        )
    return SweepPlan(record, todo, first, why)


def _dryrun_local_group(
    runner: Runner, schema: ComponentSchema, record: SweepRecord, sweep: Sweep, todo: list[int]
) -> dict[int, AppDryRunInfo[Any]]:
    """Every trial's request for a local group, as ``Runner.dryrun`` of each would make
    it (every app is made first: a component that refuses an argument set fails here).
    Without a workspace to build per trial, what is the same for all trials (the run
    options, the tracking environment, each program's place on PATH) is found once."""
    if record.workspace:
        made = {i: trial_app(runner, schema, record, i, sweep) for i in todo}
        return {
            i: runner.dryrun(
                made[i], record.scheduler, record.cfg, record.workspace, parent_run_id=record.handle
            )
            for i in todo
        }
    from torchx.schedulers.local_scheduler import LocalScheduler

    sched = runner._scheduler(record.scheduler)
    assert isinstance(sched, LocalScheduler)
    env = runner._tracking_env(record.scheduler, record.handle)
    apps = [trial_app(runner, schema, record, i, sweep, env) for i in todo]
    infos = sched.submit_dryrun_group(apps, runner._cfg(record.scheduler, record.cfg))
    for info in infos:
        info.scheduler = record.scheduler  # the name it is registered under, as dryrun sets
    return dict(zip(todo, infos, strict=True))


def _first_and_others(
    runner: Runner, schema: ComponentSchema, record: SweepRecord, sweep: Sweep, todo: list[int]
) -> tuple[AppDryRunInfo[Any], dict[int, AppDef]]:
    """The first trial's own request, and every other trial's app, for a request that runs
    them all (an array or an Indexed Job)."""
    first = todo[0]
    info = runner.dryrun(
        trial_app(runner, schema, record, first, sweep),
        record.scheduler,
        record.cfg,
        record.workspace,
        parent_run_id=record.handle,
    )
    # What the dryrun added to the first trial's roles, added to every other trial's (a
    # workspace changes the run options or the image, never the command or environment).
    env = runner._tracking_env(record.scheduler, record.handle)
    apps = {i: trial_app(runner, schema, record, i, sweep, env) for i in todo if i != first}
    return info, apps


def _plan_indexed(
    runner: Runner,
    schema: ComponentSchema,
    record: SweepRecord,
    sweep: Sweep,
    todo: list[int],
) -> SweepPlan:
    """One Indexed Job: the first trial dry-run as an app of its own, every other trial's
    command line and environment added to it (``kubernetes_indexed``)."""
    from torchx.schedulers.kubernetes_indexed import indexed_request

    first = todo[0]
    info, apps = _first_and_others(runner, schema, record, sweep, todo)
    # a resume is a new Job of the same sweep
    job = record.sweep_id + (f"-r{len(record.array_jobs)}" if record.array_jobs else "")
    request = indexed_request(info, first, apps, record.parallel, job, record.sweep_id)
    k = record.parallel or len(todo)
    why = (
        f"one Kubernetes Indexed Job of {len(todo)} completions, at most {k} pods at once; "
        "each pod picks its trial by JOB_COMPLETION_INDEX (the server supports Indexed Jobs "
        "with per-index retries and the trials are single-replica)"
    )
    return SweepPlan(record, todo, request, why)


def _plan_array(
    runner: Runner,
    schema: ComponentSchema,
    record: SweepRecord,
    sweep: Sweep,
    todo: list[int],
    check_limits: bool,
) -> SweepPlan:
    """One array request: the first trial dry-run as an app of its own, every trial's app
    made once and only its commands added to that request (``slurm_array``)."""
    from torchx.schedulers.slurm_array import array_request, check_array_size, max_array_size

    if check_limits:
        check_array_size(todo, max_array_size())
    first = todo[0]
    info, apps = _first_and_others(runner, schema, record, sweep, todo)
    name = info.app.name if info.app is not None else record.sweep_id
    request = array_request(info, first, apps, record.parallel, name, record.sweep_id)
    return SweepPlan(record, todo, request, "one Slurm job array; the task picks its trial")


def submit(runner: Runner, p: SweepPlan) -> str:
    """Submit what ``plan`` or ``resume`` built; returns the sweep handle. A resume's plan
    is submitted under the sweep's resume lock, and only if nothing was submitted for the
    sweep since the plan was made."""
    if p.resumed_from is None:
        return _submit(runner, p)
    with resuming(p.record.sweep_id, p.handle):
        # Any change, not only a submission: a cancel since the plan records trials' ends
        # that saving the plan's copy would erase.
        if _as_saved(record_of(p.handle)) != p.resumed_from:
            raise SpecsError(
                "--resume",
                p.handle,
                "the sweep changed since this plan was made (resumed or cancelled); dry-run "
                "the resume again",
            )
        return _submit(runner, p)


def resume_and_submit(runner: Runner, handle: str) -> str:
    """Plan and submit a resume of the sweep, holding its resume lock throughout, so no
    other resume plans from the record this one is about to change."""
    sweep_id = record_of(handle).sweep_id  # no such sweep: said before any lock file is made
    with resuming(sweep_id, handle):
        return _submit(runner, resume(runner, handle, check_limits=False, locked=True))


def _as_saved(record: SweepRecord) -> str:
    """The record as text, to tell whether anything in it changed."""
    return json.dumps(record.to_json(), sort_keys=True)


def _submit(runner: Runner, p: SweepPlan) -> str:
    """Submit what ``plan`` built; returns the sweep handle.

    One request (an array, an Indexed Job): the record is written once, as soon as the
    request is accepted, with its job; if it cannot be written, the job is cancelled, so
    nothing runs that no record names. Otherwise the record is written first, since the
    process that submits the trials reads it."""
    record = p.record
    if record.mode in ("array", "indexed"):
        from torchx.schedulers import SchedulerError

        try:
            handle = runner.schedule(p.request)
        except Exception as e:
            if record.mode == "array" and isinstance(e, SchedulerError):
                from torchx.schedulers.slurm_array import check_array_size, max_array_size

                # Say which limit, when that is why (asked only now: it costs a command).
                check_array_size(p.indices, max_array_size())
            raise
        job = parse_app_handle(handle)[2]
        record.array_jobs.append(job)
        for pos, i in enumerate(p.indices):
            record.trials[i].attempts.append(_member_id(record.mode, job, i, pos))
            record.trials[i].final_state, record.trials[i].final_exit_code = "", None
        try:
            save(record)
        except BaseException:
            runner.cancel(handle)
            raise
        return record.handle
    save(record)
    if p.requests:
        _start_local_group(runner, p)
        return record.handle
    _start_group(record, p.indices)
    return record.handle


def _member_id(mode: str, job: str, index: int, pos: int) -> str:
    """The app id of trial ``index``, the ``pos``-th of job ``job``: Slurm's array task
    ``A_index``, or the Indexed Job's ``NAMESPACE:JOB-pos``."""
    if mode == "array":
        return f"{job}_{index}"
    from torchx.schedulers.kubernetes_indexed import trial_app_id

    return trial_app_id(job, pos)


def _local_group(runner: Runner, scheduler: str) -> LocalScheduler | None:
    """``scheduler`` when it runs a sweep's trials as one supervised group of its own."""
    from torchx.schedulers.local_scheduler import LocalScheduler

    sched = runner._scheduler(scheduler)
    return sched if isinstance(sched, LocalScheduler) else None


def _start_local_group(runner: Runner, p: SweepPlan) -> None:
    from torchx.schedulers.local_scheduler import LocalScheduler

    record = p.record
    sched = runner._scheduler(record.scheduler)
    assert isinstance(sched, LocalScheduler)
    infos = [p.requests[i] for i in p.indices]
    try:
        proc = sched.schedule_group(
            infos, record.parallel, record.sweep_id, str(sweeps_dir() / f"{record.sweep_id}.log")
        )
    except Exception:
        if not any(t.attempts for t in record.trials):
            record_path(record.sweep_id).unlink(missing_ok=True)  # nothing was submitted
        raise
    for i, info in zip(p.indices, infos, strict=True):
        trial = record.trials[i]
        trial.attempts.append(info.request.app_id)
        trial.final_state, trial.final_exit_code = "", None
    _drivers[proc.pid] = proc
    record.driver_pid = proc.pid
    record.driver_done = False
    save(record)


def _start_group(record: SweepRecord, indices: list[int]) -> None:
    log = sweeps_dir() / f"{record.sweep_id}.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "torchx.runner._sweep_group",
                record.sweep_id,
                ",".join(map(str, indices)),
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    # The driver records itself too; this makes a status asked at once see it running.
    _drivers[proc.pid] = proc
    record.driver_pid = proc.pid
    record.driver_done = False
    save(record)


# -- by handle --------------------------------------------------------------------------


def sweep_id_of(handle: str) -> str | None:
    """The sweep id of ``handle`` if it names a sweep, else None."""
    try:
        _, _, app_id = parse_app_handle(handle)
    except SpecsError:
        return None
    return app_id if is_sweep_id(app_id) else None


def sweep_handle_of(sweep_id: str) -> str | None:
    """The handle of sweep ``sweep_id`` (``sweep-...``) submitted from this machine, read
    from its record alone (no scheduler is asked); None when there is no such record."""
    if not is_sweep_id(sweep_id):
        return None
    try:
        record = load(sweep_id)
    except Exception:  # any unreadable record: a hint must never fail
        return None
    return record.handle if record is not None else None


def record_of(handle: str) -> SweepRecord:
    sweep_id = sweep_id_of(handle)
    record = load(sweep_id) if sweep_id else None
    if record is None:
        raise SpecsError(
            "sweep handle", handle, "no such sweep here; `torchx run --sweep ...` prints one"
        )
    return record


# Drivers this process started: their exit is read from the child itself (a driver that
# ended is a zombie until reaped, with an empty command line).
_drivers: dict[int, subprocess.Popen[bytes]] = {}


def driver_alive(record: SweepRecord) -> bool:
    pid = record.driver_pid
    if pid is None or record.driver_done:
        return False
    if pid in _drivers:
        return _drivers[pid].poll() is None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return record.sweep_id.encode() in f.read()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


def trial_handle(record: SweepRecord, index: int) -> str | None:
    if not 0 <= index < len(record.trials):
        raise SpecsError(
            "trial index", index, f"the sweep has trials 0 to {len(record.trials) - 1}"
        )
    attempts = record.trials[index].attempts
    if not attempts:
        return None
    return make_app_handle(record.scheduler, record.session, attempts[-1])


def exit_code(st: AppStatus) -> int | None:
    codes = [r.exit_code for role in st.roles for r in role.replicas if r.exit_code is not None]
    nonzero = [c for c in codes if c != 0]
    if nonzero:
        return nonzero[0]
    return 0 if st.state == AppState.SUCCEEDED else (codes[0] if codes else None)


def status(runner: Runner, handle: str) -> SweepStatus:
    """Every trial's state; while a resume of the sweep runs (it holds the sweep's resume
    lock), the trials it submits again read PENDING and the sweep has not ended."""
    # The lock first, then the record: a record read after the lock was found free is the
    # one from before a resume or the one it saved, never the old one read just before a
    # resume saved and let go (which would read as ended while its trials run again).
    resumed_by = _resumer_of(handle)
    return _status(runner, handle, record_of(handle), resumed_by)


def _resumer_of(handle: str) -> str | None:
    sweep_id = sweep_id_of(handle)
    return resumer(sweep_id) if sweep_id is not None else None  # record_of then says why


def _status(
    runner: Runner, handle: str, record: SweepRecord, resumed_by: str | None
) -> SweepStatus:
    alive = record.mode == "group" and driver_alive(record)
    local_group = _local_group(runner, record.scheduler) if record.mode == "group" else None
    # A local group's trials are read together, each from its state file alone.
    local_states = _local_statuses(local_group, record) if local_group else {}
    trials: list[TrialStatus] = []
    tasks: dict[str, Any] = {}
    if record.mode == "array":
        from torchx.schedulers.slurm_array import describe_tasks

        latest = [t.attempts[-1] for t in record.trials if t.attempts]
        tasks = describe_tasks(latest, record.array_jobs)
    # On Kubernetes every trial's pods carry the sweep's label: one list call for all.
    by_pods = record.mode == "indexed" or is_kubernetes(runner, record.scheduler)
    pod_states = trial_pod_states(runner, record) if by_pods else {}
    for t in record.trials:
        th = trial_handle(record, t.index)
        state, code, msg = AppState.UNKNOWN, None, ""
        reruns = 0  # the latest submission's runs after its first, where its status says
        if not t.attempts:
            if t.error:
                state, msg = AppState.FAILED, t.error
            elif t.cancelled or record.cancelled:
                state = AppState.CANCELLED
            elif alive:
                state = AppState.PENDING
            else:
                state, msg = AppState.FAILED, "never submitted"
        elif record.mode == "array":
            task = tasks.get(t.attempts[-1])
            if task is not None:
                state, code = task.state, task.exit_code
                msg = task.slurm_state
        elif by_pods:
            found = pod_states.get(t.attempts[-1])
            if t.final_state:  # the driver saw its Jobs end (their retries included)
                state, code = AppState[t.final_state], t.final_exit_code
                reruns = max(found[3] - 1, 0) if found is not None else 0
            elif found is not None and not (record.cancelled and not is_terminal(found[0])):
                state, code, msg, runs = found
                # every pod that started is a run; a pod still Pending is not one yet
                reruns = max(runs - (0 if state == AppState.PENDING else 1), 0)
            elif record.cancelled:
                # cancelling deletes its Job and pods (a pod the Job controller made just
                # before its Job went is removed by the garbage collector soon after)
                state = AppState.CANCELLED
            elif record.mode == "indexed" or alive:
                state, msg = AppState.PENDING, "no pod of it yet"
            else:
                state, msg = AppState.FAILED, "no pod of it is left in the cluster"
        else:
            assert th is not None
            st = local_states.get(t.attempts[-1]) if local_group else runner.status(th)
            if st is not None:
                state, code, msg = st.state, exit_code(st), st.msg
                reruns = st.num_restarts + st.num_preemptions
            elif t.final_state:
                state, code = AppState[t.final_state], t.final_exit_code
            elif record.cancelled:
                state = AppState.CANCELLED  # cancelling removed it (Kubernetes deletes Jobs)
            else:
                state, msg = AppState.FAILED, "its scheduler no longer knows this app"
            if state == AppState.PENDING and not alive and local_group:
                # the group that was to start it is gone: it never will
                state, msg = AppState.FAILED, "the sweep's group process ended before starting it"
        if resumed_by is not None and is_terminal(state) and state != AppState.SUCCEEDED:
            state, code, msg = AppState.PENDING, None, f"being submitted again ({resumed_by})"
        attempts = _started(t, state, msg, reruns)
        trials.append(TrialStatus(t.index, dict(t.args), state, attempts, code, th, msg))
    overall = _overall(record, trials, alive)
    why = ""
    if resumed_by is not None:
        why = (
            f"a resume of it is running ({resumed_by}): it submits again the trials that did "
            "not succeed, so the sweep has not ended"
        )
    return SweepStatus(handle, overall, record.mode, trials, why)


def _started(trial: TrialRecord, state: AppState, msg: str, reruns: int = 0) -> int:
    """How many runs of the trial have started: one for each earlier submission (one that
    ``--resume`` replaced), and of the latest submission its runs that ended before
    (``reruns``: restarts by ``max_retries`` and requeues after a preemption, where its
    scheduler's status says them) plus the one now, unless it waits (PENDING)."""
    if not trial.attempts:
        return 0
    waiting = state == AppState.PENDING
    if waiting and msg == "REQUEUED" and not reruns:
        # Slurm says it waits again after a preemption, with no count of the runs before
        reruns = 1
    return len(trial.attempts) - 1 + reruns + (0 if waiting else 1)


def _local_statuses(sched: LocalScheduler, record: SweepRecord) -> dict[str, AppStatus | None]:
    """The status of each trial's latest attempt, by app id, on a local scheduler."""
    return sched.statuses([t.attempts[-1] for t in record.trials if t.attempts])


def _overall(record: SweepRecord, trials: list[TrialStatus], alive: bool) -> AppState:
    states = [t.state for t in trials]
    if alive or not all(is_terminal(s) for s in states):
        if any(s == AppState.RUNNING for s in states):
            return AppState.RUNNING
        return AppState.RUNNING if any(is_terminal(s) for s in states) else AppState.PENDING
    if all(s == AppState.SUCCEEDED for s in states):
        return AppState.SUCCEEDED
    # Cancelled, as an app is, when the user cancelled it (a replica killed by the cancel
    # may read as failed), or when every trial that did not succeed was cancelled (a
    # cancel that ends the driver first may be read before it is recorded).
    ended_well = (AppState.SUCCEEDED, AppState.CANCELLED)
    if record.cancelled or all(s in ended_well for s in states):
        return AppState.CANCELLED
    return AppState.FAILED


def wait(
    runner: Runner, handle: str, interval: float = 1.0, timeout: float | None = None
) -> SweepStatus:
    """The sweep's status once every trial ended, or once ``timeout`` seconds passed (then
    not terminal)."""
    deadline = None if timeout is None else time.monotonic() + timeout

    def left(pause: float) -> float:
        return pause if deadline is None else min(pause, deadline - time.monotonic())

    while True:
        record = record_of(handle)
        driver = record.driver_pid
        if record.mode == "group" and driver is not None and driver_alive(record):
            # The sweep cannot end while its driver lives (``_overall``): sleep until the
            # driver exits rather than describe every trial each ``interval``.
            pause = left(max(interval, _DRIVER_RECHECK_S))
            if pause > 0:
                _await_exit(driver, pause)
                continue
        st = status(runner, handle)
        pause = left(interval)
        if st.is_terminal() or pause <= 0:
            return st
        time.sleep(pause)


# How long a waiter trusts a driver's pid before it looks again that the pid is still the
# driver's (a pid is reused once its process is gone).
_DRIVER_RECHECK_S = 1.0


def _await_exit(pid: int, timeout: float) -> None:
    """Sleep until process ``pid`` exits, or ``timeout`` seconds."""
    from torchx.schedulers.local_scheduler import wait_for_exit

    own = _drivers.get(pid)
    if wait_for_exit(pid, timeout):
        if own is not None:
            own.poll()
    elif own is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            own.wait(timeout)
    else:
        time.sleep(min(timeout, 0.05))


def cancel(runner: Runner, handle: str, timeout: float = 60.0) -> None:
    """End every trial: the driver stops submitting and cancels what it started (or
    Slurm cancels the whole array); returns once nothing of the sweep runs. Refused at
    once while a resume of the sweep runs."""
    sweep_id = record_of(handle).sweep_id  # no such sweep: said before any lock file is made
    # Held from the read to the last save: a resume meanwhile would submit jobs that a save
    # from the copy read before would drop from the record (running, and named nowhere).
    with changing(sweep_id, handle, "cancel"):
        _cancel(runner, handle, record_of(handle), timeout)


def _cancel(runner: Runner, handle: str, record: SweepRecord, timeout: float) -> None:
    if record.mode == "array":
        from torchx.schedulers.slurm_array import cancel_arrays

        record.cancelled = True
        save(record)
        cancel_arrays(record.array_jobs)
        return
    if driver_alive(record) and record.driver_pid is not None:
        os.kill(record.driver_pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while driver_alive(record) and time.monotonic() < deadline:
            time.sleep(0.05)
        record = record_of(handle)
    if not record.cancelled:
        record.cancelled = True
        save(record)
    if record.mode == "indexed" or is_kubernetes(runner, record.scheduler):
        # Every trial's objects go, ended trials' too (Kubernetes keeps them otherwise):
        # how the ended ones ended is recorded first, from their pods.
        st = status(runner, handle)
        record = record_of(handle)
        for t in st.trials:
            trial = record.trials[t.index]
            if trial.attempts and is_terminal(t.state) and not trial.final_state:
                trial.final_state, trial.final_exit_code = t.state.name, t.exit_code
        save(record)
        delete_trials(runner, record)
        return
    # what has ended, or will never start (its group is gone), needs no cancel
    for t in status(runner, handle).trials:
        if t.handle is not None and not is_terminal(t.state):
            runner.cancel(t.handle)


def resume(
    runner: Runner, handle: str, check_limits: bool = True, *, locked: bool = False
) -> SweepPlan:
    """A plan that runs again only the trials that did not succeed. ``locked``: the
    caller holds the sweep's resume lock (otherwise a resume running now is refused)."""
    if not locked:
        who = _resumer_of(handle)  # before the record is read: see status()
        if who is not None:
            raise busy(handle, who)
    record = record_of(handle)
    if record.mode == "group" and driver_alive(record):
        raise SpecsError(
            "--resume", handle, "the sweep is still running; wait for it or cancel it first"
        )
    before = _as_saved(record)  # before this plan changes the record
    st = _status(runner, handle, record, None)
    if not st.is_terminal():
        raise SpecsError(
            "--resume", handle, "some trials are still running; wait for them or cancel first"
        )
    todo = [t.index for t in st.trials if t.state != AppState.SUCCEEDED]
    if not todo:
        raise SpecsError("--resume", handle, "every trial succeeded; there is nothing to re-run")
    record.cancelled = False
    for t in record.trials:
        t.cancelled, t.error = False, ""
    if record.workspace and record.cfg.get("job_dir"):
        # Copied into job_dir when the sweep was submitted: the re-run trials find it there.
        record.built_workspace, record.workspace = record.workspace, None
    p = plan(
        runner,
        _sweep_of(record),
        record.scheduler,
        record=record,
        indices=todo,
        check_limits=check_limits,
    )
    p.resumed_from = before
    return p


__all__ = [
    "SweepPlan",
    "SweepStatus",
    "TrialStatus",
    "cancel",
    "plan",
    "record_of",
    "resume",
    "resume_and_submit",
    "status",
    "submit",
    "sweep_handle_of",
    "sweep_id_of",
    "trial_handle",
    "wait",
]
