"""Planning a sweep: each trial's app (the component called with its arguments, its
environment saying which trial it is) and the one request that runs them, by the
scheduler's way of running trials (an array, an Indexed Job, a local group, a group).
Nothing is submitted here.
"""

from __future__ import annotations

import contextlib
import json
import os
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
from torchx.runner._sweep_kubernetes import kubernetes_mode, trial_cfg
from torchx.runner._sweep_processes import _LOCAL, local_group
from torchx.runner._sweep_record import SweepRecord, TrialRecord
from torchx.runner._tracking import with_env
from torchx.specs import AppDef, AppDryRunInfo, CfgVal, SpecsError

if TYPE_CHECKING:
    from torchx.runner._runner import Runner
    from torchx.schedulers import Scheduler
    from torchx.specs import ComponentSchema

ARRAY_BACKENDS = ("slurm",)
# ``json.dumps(..., sort_keys=True)`` makes a new encoder at each call; a sweep encodes
# every trial's arguments.
_ARGS_JSON = json.JSONEncoder(sort_keys=True)


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


def new_sweep_id() -> str:
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


def sweep_of(record: SweepRecord) -> Sweep:
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
    argv = (sweep or sweep_of(record)).trial_argv(index)
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
    sweep_id: str | None = None,
) -> SweepPlan:
    """Check the sweep against its component and build what would be submitted.

    ``check_limits`` asks the backend for its limits (Slurm's ``MaxArraySize``) now; when
    False, they are asked only if the backend refuses the request (``submit``).
    ``sweep_id``: a new sweep's id (``new_sweep_id``), where the caller has made it."""
    from torchx.components import get_component

    schema = get_component(sweep.component)
    check_sweep(schema, sweep)
    sched = runner._scheduler(scheduler)
    mode = "array" if sched.backend in ARRAY_BACKENDS else "group"
    why_group = ""
    if record is None:
        record = SweepRecord(
            sweep_id=sweep_id or new_sweep_id(),
            scheduler=scheduler,
            session=runner.name(),
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
        if sched.backend == "kubernetes":
            # Before the workspace build, as every check: the mode depends on the trials'
            # shape and the server, not on their images, and says whether a driver process
            # submits the trials (one Job each), whose parameters are checked next.
            record.mode, why_group = kubernetes_mode(
                runner, record, lambda i: trial_app(runner, schema, record, i, sweep)
            )
        check_driver(runner, record, resumed=False, given=schema.name)
        if workspace:
            from torchx.runner._sweep_workspace import build_workspace_once

            build_workspace_once(runner, schema, record, sweep)
    else:
        check_driver(runner, record, resumed=True)
    todo = list(range(len(record.trials))) if indices is None else sorted(indices)
    if record.mode == "array":
        return _plan_array(runner, schema, record, sweep, todo, check_limits)
    if record.mode == "indexed":
        return _plan_indexed(runner, schema, record, sweep, todo)
    k = record.parallel or len(todo)
    if local_group(runner, record.scheduler):
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
    if sched.backend in _LOCAL:  # a subclass with a schedule of its own (see local_group)
        why = (
            f"{type(sched).__name__} overrides schedule: one app per trial, submitted through "
            f"it by a local process, at most {k} running at once; trial {todo[0]}'s request:"
        )
    if why_group:
        why = (
            f"one Job per trial, not one Indexed Job, because {why_group}; at most {k} "
            f"running at once, submitted by a local process; trial {todo[0]}'s request:"
        )
    return SweepPlan(record, todo, first, why)


def check_driver(runner: Runner, record: SweepRecord, resumed: bool, given: str = "") -> None:
    """Refuses, before any workspace is built or anything recorded, a sweep whose trials
    the driver process (one app per trial) could not submit as this Runner would; records
    for a new sweep the parameters and defaults that process gets. A resume's driver keeps
    what the sweep was submitted with, so that is what is checked.

    ``given`` is the component's name as the user wrote it (``comp.py:train``), which the
    Runner's defaults are keyed by; they are recorded under ``record.component``, the name
    the driver finds it by (a file component's absolute path)."""
    if record.mode != "group" or local_group(runner, record.scheduler) is not None:
        return
    if resumed:
        check_driver_builds(runner, record.scheduler, record.scheduler_params)
        return
    record.scheduler_params = check_driver_builds(runner, record.scheduler)
    name = given or record.component
    defaults = runner._component_defaults.get(name)
    record.component_defaults = {}
    if defaults is not None:  # the driver's trials call this component alone
        record.component_defaults[record.component] = {
            k: recordable(f"component_defaults[{name!r}][{k!r}]", v, record.scheduler)
            for k, v in defaults.items()
        }


def check_driver_builds(
    runner: Runner, scheduler: str, recorded: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The parameters the driver process builds ``scheduler`` with (``recorded``, else
    this Runner's, to be recorded); refuses a sweep whose trials that process could not
    submit as this Runner would. That process makes its own Runner (``get_runner``) from
    the record, which finds ``scheduler`` by its ``torchx.schedulers`` entry point, so a
    factory given to this Runner alone (a subclass under a built-in name or a name of its
    own) would be skipped there, and a parameter JSON cannot hold as it is (a client
    object, a tuple) could not reach it unchanged."""
    from torchx.schedulers import get_scheduler_factories

    sched = runner._scheduler(scheduler)  # refuses an unknown name
    mine = runner._factories[scheduler]
    given = runner._params_for(scheduler, mine) if recorded is None else recorded
    params = {
        k: recordable(f"scheduler parameter {k!r} of {scheduler!r}", v, scheduler)
        for k, v in given.items()
    }
    whose = "this Runner's" if recorded is None else "the sweep's recorded"
    registered = get_scheduler_factories().get(scheduler)
    cls = type(sched).__name__
    if registered is not None:
        if _loaded(mine) is _loaded(registered):
            return params
        try:
            built = registered(runner.name(), **params)
        except Exception as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise SweepError(
                "scheduler",
                scheduler,
                f"the sweep's driver process could not build it from its entry point with "
                f"{whose} parameters {sorted(params)}: {first}; run the trials with Runner.run",
            ) from None
        if built is sched:  # a factory that hands every Runner one shared instance
            return params
        with contextlib.closing(built):
            if type(built) is type(sched):
                return params
        why = f"this Runner's {cls} is not the scheduler registered as {scheduler!r}"
        fix = f"register {cls} as one under a name of its own and sweep on that name"
    else:  # a registered name keeps its scheduler (a plug-in cannot replace a built-in)
        why = f"{cls} is given to this Runner alone"
        fix = f"register {scheduler!r} as one"
    raise SweepError(
        "scheduler",
        scheduler,
        f"{why}; this sweep's trials are submitted one by one by a separate process, which finds "
        f"schedulers by their torchx.schedulers entry points: {fix}, or run the trials "
        "with Runner.run",
    )


class _Short:
    """Shows a value by a shortened repr in an error (a long list stays one short line)."""

    def __init__(self, value: object) -> None:
        import reprlib

        short = reprlib.Repr()
        short.maxstring = short.maxother = 60
        self.text = short.repr(value)

    def __repr__(self) -> str:
        return self.text


def recordable(what: str, value: Any, scheduler: str) -> Any:
    """``value`` as the sweep record holds it: JSON that reads back as an equal value of
    the same types, so the driver's factory gets what this Runner's got; a path (also in
    a list or dict) becomes its str. Else a one-line refusal naming ``what``, the element
    JSON would change and the fix."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if value is None or type(value) in (str, int, bool):
        return value
    if type(value) is float and value == value and abs(value) != float("inf"):
        return value
    if type(value) is list:
        return [recordable(what, v, scheduler) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {k: recordable(what, v, scheduler) for k, v in value.items()}
    import enum

    if isinstance(value, tuple):
        fix = "give a list instead of the tuple"
    elif isinstance(value, dict):
        fix = "give the dict str keys"
    elif isinstance(value, enum.Enum):
        fix = f"give its value ({value.value!r}) instead of the enum"
    elif isinstance(value, float):
        fix = "give a finite number"
    else:
        fix = (
            "give it as a str, number, bool, None, list or str-keyed dict, or by the "
            "scheduler's environment or config (DOCKER_HOST, RAY_ADDRESS, a kubeconfig)"
        )
    raise SweepError(
        what,
        _Short(value),
        f"the sweep's trials on {scheduler} are submitted by a separate process, which gets "
        f"this from the sweep record (JSON), where it would not read back the same: {fix}, "
        "or run the trials with Runner.run",
    )


def _loaded(factory: Any) -> Any:
    """The callable a registered factory imports when first called (it has ``load``), or
    ``factory`` itself."""
    load = getattr(factory, "load", None)
    return load() if callable(load) else factory


def _dryrun_local_group(
    runner: Runner, schema: ComponentSchema, record: SweepRecord, sweep: Sweep, todo: list[int]
) -> dict[int, AppDryRunInfo[Any]]:
    """Every trial's request for a local group, as ``Runner.dryrun`` of each would make
    it (every app is made first: a component that refuses an argument set fails here).
    Without a workspace to build per trial, what is the same for all trials (the run
    options, the tracking environment, each program's place on PATH) is found once; a
    subclass that makes requests its own way gets each trial's made by its override."""
    sched = runner._scheduler(record.scheduler)
    if record.workspace or _own_dryrun(sched):
        made = {i: trial_app(runner, schema, record, i, sweep) for i in todo}
        return {
            i: runner.dryrun(
                made[i], record.scheduler, record.cfg, record.workspace, parent_run_id=record.handle
            )
            for i in todo
        }
    from torchx.schedulers.local_scheduler import LocalScheduler

    assert isinstance(sched, LocalScheduler)
    env = runner._tracking_env(record.scheduler, record.handle)
    apps = [trial_app(runner, schema, record, i, sweep, env) for i in todo]
    cfg = runner._cfg(record.scheduler, record.cfg)
    # the name it is registered under, as dryrun gives it
    infos = sched.submit_dryrun_group(apps, cfg, scheduler=record.scheduler)
    return dict(zip(todo, infos, strict=True))


def _own_dryrun(sched: Scheduler[Any]) -> bool:
    """Whether ``sched``'s class (a user's LocalScheduler subclass) overrides how one app's
    request is made (0.7's ``submit_dryrun`` or ``_submit_dryrun``), which the group's
    shared dry run would skip."""
    from torchx.schedulers import Scheduler
    from torchx.schedulers.local_scheduler import LocalScheduler

    cls = type(sched)
    return (
        cls._submit_dryrun is not LocalScheduler._submit_dryrun
        or cls.submit_dryrun is not Scheduler.submit_dryrun
    )


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
