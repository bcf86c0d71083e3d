"""The Runner: resolve config, validate, dry-run and submit apps; address them by handle."""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from torchx.runner._config import ConfigError, TorchxConfig, load_config
from torchx.schedulers import (
    DEFAULT_SCHEDULER,
    ListAppResponse,
    LogOptions,
    Scheduler,
    SchedulerError,
    SchedulerFactory,
    Stream,
    UnknownSchedulerError,
    declared_params,
    get_scheduler_factories,
    registered_dryrun,
)
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppHandle,
    AppStatus,
    CfgVal,
    ComponentSchema,
    SpecsError,
    UnknownAppException,
    close_matches,
    closest,
    make_app_handle,
    parse_app_handle,
    runopts,
    validate_app,
)

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11+; annotations only, so 3.10 runs this

    from torchx.runner._sweep import Sweep
    from torchx.runner._sweeps import SweepPlan, SweepStatus

ComponentArgs = Sequence[str] | Mapping[str, str | int | float | bool]

# The session of a runner not given a name: the one in the handles ``torchx run`` prints.
DEFAULT_SESSION = "torchx"


_F = TypeVar("_F", bound=Callable[..., Any])


def _recorded(fn: _F) -> _F:
    """Record each call of a Runner method as a ``torchx.runner.events`` event (its
    scheduler and app id, the time it took, the traceback if it raised)."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(self: Runner, *args: Any, **kwargs: Any) -> Any:
        if "logging" not in sys.modules:
            # Events go to Python logging; before it is imported nobody can have added a
            # handler to the events logger, so a plain CLI call skips building the event.
            return fn(self, *args, **kwargs)
        from torchx.runner.events import log_event

        bound = signature.bind_partial(self, *args, **kwargs).arguments
        scheduler, app_id = bound.get("scheduler"), None
        handle = bound.get("app_handle")
        info = bound.get("dryrun_info")
        if isinstance(handle, str):
            with contextlib.suppress(Exception):
                scheduler, _, app_id = parse_app_handle(handle)
        elif isinstance(info, AppDryRunInfo):
            scheduler = info.scheduler
        workspace = bound.get("workspace")
        with log_event(
            fn.__name__,
            scheduler if isinstance(scheduler, str) else None,
            app_id,
            workspace=workspace if isinstance(workspace, str) else None,
            session=self._name,
        ) as ev:
            result = fn(self, *args, **kwargs)
            if fn.__name__ == "schedule" and isinstance(result, str):
                ev.event.app_id = parse_app_handle(result)[2]
            return result

    return wrapper  # type: ignore[return-value]


class Runner:
    """Submits apps to schedulers and answers for them by handle (``SCHEDULER://SESSION/ID``).

    Use it as a context manager (or call ``close``) to release scheduler clients; apps it
    started keep running (see ``close``). Config precedence for run options and component
    arguments: explicit arguments (``cfg``, component arguments, ``component_defaults``),
    then the ``.torchxconfig`` files (``config``; ``TorchxConfig()`` reads none), then the
    defaults of the schedulers and components.
    """

    def __init__(
        self,
        name: str,
        scheduler_factories: Mapping[str, SchedulerFactory],
        component_defaults: Mapping[str, Mapping[str, str]] | None = None,
        scheduler_params: Mapping[str, Any] | None = None,
        config: TorchxConfig | None = None,
    ) -> None:
        self._name = name
        # Kept as given: the registry's mapping resolves built-in names without scanning
        # installed packages, which would cost every CLI command tens of milliseconds.
        self._factories = scheduler_factories
        self._component_defaults = {k: dict(v) for k, v in (component_defaults or {}).items()}
        self._scheduler_params = dict(scheduler_params or {})
        self._schedulers: dict[str, Scheduler[Any]] = {}
        self.config = (
            config if config is not None else load_config(known_schedulers=self._factories)
        )

    def name(self) -> str:
        """The session name in the handles this runner returns (a method, as in 0.7)."""
        return self._name

    # -- context manager --------------------------------------------------------------

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        """``close()``: apps started inside the ``with`` keep running (see ``close``)."""
        self.close()

    def close(self) -> None:
        """Release the scheduler clients. Apps keep running: local_cwd and local_dir apps
        are detached, so that any process can follow them by handle (0.7 killed local apps
        here). To stop what a program started, ``cancel(handle)`` in a ``finally``, or
        ``wait(handle)`` for it to end."""
        for scheduler in self._schedulers.values():
            scheduler.close()
        self._schedulers.clear()

    # -- schedulers -------------------------------------------------------------------

    def scheduler_backends(self) -> list[str]:
        return sorted(self._factories)

    def has_scheduler(self, name: str) -> bool:
        """Whether ``name`` is a usable scheduler (cheaper than listing them all)."""
        return name in self._factories

    def _scheduler(self, name: str) -> Scheduler[Any]:
        if name not in self._schedulers:
            factory = self._factories.get(name)
            if factory is None:
                raise UnknownSchedulerError(name, list(self._factories))
            sched = factory(self._name, **self._params_for(name, factory))
            # the name its dry runs give _validate and their result, where it differs
            # from the backend's (a plug-in registered as "custom"); a factory that hands
            # every Runner one shared instance keeps the first name (this Runner's own dry
            # runs pass its name explicitly)
            if sched.registered_name is None:
                sched.registered_name = name
            self._schedulers[name] = sched
        return self._schedulers[name]

    def _params_for(self, name: str, factory: SchedulerFactory) -> dict[str, Any]:
        """The scheduler parameters meant for scheduler ``name``.

        A parameter given as ``NAME={...}`` (a mapping under a scheduler's name) goes to
        that scheduler only; any other goes to each scheduler whose factory declares it by
        name, or to every factory that takes only ``**kwargs``.
        """
        if not self._scheduler_params:
            return {}
        declared = declared_params(factory)
        params: dict[str, Any] = {}
        for key, value in self._scheduler_params.items():
            if isinstance(value, Mapping) and key in self._factories:
                continue
            if declared is None or key in declared:
                params[key] = value
        own = self._scheduler_params.get(name)
        if isinstance(own, Mapping):
            params.update(own)
        return params

    def scheduler_run_opts(self, scheduler: str) -> runopts:
        return self._scheduler(scheduler).run_opts()

    def _cfg(self, scheduler: str, cfg: Mapping[str, CfgVal] | None) -> dict[str, CfgVal]:
        if cfg is not None and not isinstance(cfg, Mapping):
            raise SpecsError(
                "cfg", cfg, "give the run options as a dict, e.g. {'log_dir': '/tmp/logs'}"
            )
        from_file = self.config.scheduler_cfg(scheduler, self.scheduler_run_opts(scheduler))
        return {**from_file, **(cfg or {})}

    # -- submitting -------------------------------------------------------------------

    @_recorded
    def dryrun(
        self,
        app: AppDef,
        scheduler: str = DEFAULT_SCHEDULER,
        cfg: Mapping[str, CfgVal] | None = None,
        workspace: str | None = None,
        parent_run_id: str | None = None,
    ) -> AppDryRunInfo[Any]:
        """Validate ``app`` and build the request ``scheduler`` would submit; starts nothing.

        Every role gets the tracking environment (``TORCHX_JOB_ID``, the trackers of
        ``[torchx:tracker]``, and ``TORCHX_PARENT_RUN_ID`` from ``parent_run_id``) on a
        copy of ``app``; see ``torchx.runner._tracking``.
        """
        validate_app(app)
        from torchx.runner._tracking import with_env

        app = with_env(app, self._tracking_env(scheduler, parent_run_id))
        sched = self._scheduler(scheduler)
        merged = self._cfg(scheduler, cfg)
        if workspace:
            app, merged = self._with_workspace(app, scheduler, merged, workspace)
        return registered_dryrun(sched, app, merged, scheduler)

    def _with_workspace(
        self, app: AppDef, scheduler: str, merged_cfg: Mapping[str, CfgVal], workspace: str
    ) -> tuple[AppDef, dict[str, CfgVal]]:
        """``app`` with ``workspace`` built into it, and the run options to run it with."""
        # 0.7 wrote workspaces as fsspec URLs (its CLI default was file://$PWD)
        local = workspace[len("file://") :] if workspace.startswith("file://") else workspace
        return self._scheduler(scheduler).with_workspace(app, merged_cfg, local)

    def _tracking_env(self, scheduler: str, parent_run_id: str | None) -> dict[str, str]:
        """What ``dryrun`` adds to every role of an app for ``scheduler``."""
        from torchx.runner._tracking import tracker_env

        return tracker_env(self.config.trackers(), scheduler, self._name, parent_run_id)

    def default_workspace(
        self, scheduler: str, cfg: Mapping[str, CfgVal] | None = None
    ) -> str | None:
        """The workspace the CLI gives ``scheduler`` when none is asked for, as pytorch/torchx
        0.7's did: the current directory on local_docker, kubernetes and ray, and on Slurm
        with a new ``job_dir``; None elsewhere. ``dryrun(workspace=None)`` builds none."""
        sched = self._scheduler(scheduler)
        return sched.default_workspace(sched.run_opts().resolve(self._cfg(scheduler, cfg)))

    @_recorded
    def schedule(self, dryrun_info: AppDryRunInfo[Any]) -> AppHandle:
        """Submit what ``dryrun`` returned; returns the app's handle."""
        if not dryrun_info.scheduler:
            raise SpecsError(
                "dryrun_info", dryrun_info, "make it with Runner.dryrun or Scheduler.submit_dryrun"
            )
        app_id = self._scheduler(dryrun_info.scheduler).schedule(dryrun_info)
        return make_app_handle(dryrun_info.scheduler, self._name, app_id)

    def run(
        self,
        app: AppDef,
        scheduler: str = DEFAULT_SCHEDULER,
        cfg: Mapping[str, CfgVal] | None = None,
        workspace: str | None = None,
        parent_run_id: str | None = None,
    ) -> AppHandle:
        """Validate, dry-run and submit ``app``; returns its handle at once (see ``wait``).

        ``parent_run_id`` records, in the configured trackers, the run this one derives from.
        """
        return self.schedule(self.dryrun(app, scheduler, cfg, workspace, parent_run_id))

    def component_app(
        self,
        component: str | ComponentSchema,
        component_args: ComponentArgs = (),
    ) -> AppDef:
        """The AppDef that component ``component`` makes from ``component_args``.

        ``component`` is a name or the schema already found (the CLI passes the one it
        found, so nothing is looked up twice). ``component_args`` is CLI-style
        (``["--msg", "hi"]``) or a mapping of argument names to values. Defaults for
        arguments not given come from ``get_runner(component_defaults=...)``, then from
        ``[component:NAME]`` in the config files.
        """
        if isinstance(component, str):
            from torchx.components import get_component

            schema = get_component(component)
        else:
            schema = component
        name = schema.name
        parsed = schema.read(_as_argv(component_args))
        file_defaults = self.config.component_defaults(name)
        code_defaults = self._component_defaults.get(name, {})
        defaults: dict[str, str] = {}
        sources: dict[str, str] = {}
        for key, value in code_defaults.items():
            arg = schema.option(key)
            if arg is None:
                raise SpecsError(
                    f"component_defaults[{name!r}][{key!r}]", value, _takes(schema, key)
                )
            defaults[arg.name] = value
        for key, (value, origin) in file_defaults.items():
            arg = schema.option(key)
            if arg is None:
                raise ConfigError(origin, f"component:{name}", key, value, _takes(schema, key))
            # given in code, like an explicit cfg, it beats a file the program never named
            if arg.name not in defaults:
                defaults[arg.name] = value
                sources[arg.name] = ConfigError.field_of(origin, f"component:{name}", key)
        if defaults:
            schema.apply_defaults(parsed, defaults, sources)
        return schema.call_parsed(parsed)

    def dryrun_component(
        self,
        component: str | ComponentSchema,
        component_args: ComponentArgs = (),
        scheduler: str = DEFAULT_SCHEDULER,
        cfg: Mapping[str, CfgVal] | None = None,
        workspace: str | None = None,
        parent_run_id: str | None = None,
    ) -> AppDryRunInfo[Any]:
        app = self.component_app(component, component_args)
        return self.dryrun(app, scheduler, cfg, workspace, parent_run_id)

    def run_component(
        self,
        component: str | ComponentSchema,
        component_args: ComponentArgs = (),
        scheduler: str = DEFAULT_SCHEDULER,
        cfg: Mapping[str, CfgVal] | None = None,
        workspace: str | None = None,
        parent_run_id: str | None = None,
    ) -> AppHandle:
        """Find ``component`` (``group.name``, ``path/file.py:fn`` or an entry point), call it
        with ``component_args`` and submit the app."""
        return self.schedule(
            self.dryrun_component(
                component, component_args, scheduler, cfg, workspace, parent_run_id
            )
        )

    # -- sweeps -----------------------------------------------------------------------

    def dryrun_sweep(
        self,
        sweep: Sweep,
        scheduler: str = DEFAULT_SCHEDULER,
        cfg: Mapping[str, CfgVal] | None = None,
        workspace: str | None = None,
        parent_run_id: str | None = None,
    ) -> SweepPlan:
        """Check every trial's values against the component and build the one request
        (a Slurm job array) or the first trial's; submits nothing."""
        from torchx.runner import _sweeps

        return _sweeps.plan(self, sweep, scheduler, cfg, workspace, parent_run_id)

    def schedule_sweep(self, plan: SweepPlan) -> AppHandle:
        """Submit what ``dryrun_sweep`` or ``dryrun_resume_sweep`` built; the sweep handle."""
        from torchx.runner import _sweeps

        return _sweeps.submit(self, plan)

    def run_sweep(
        self,
        sweep: Sweep,
        scheduler: str = DEFAULT_SCHEDULER,
        cfg: Mapping[str, CfgVal] | None = None,
        workspace: str | None = None,
        parent_run_id: str | None = None,
    ) -> AppHandle:
        """Submit every trial of ``sweep``; returns the sweep's handle at once."""
        from torchx.runner import _sweeps

        def plan_for(sweep_id: str) -> SweepPlan:
            return _sweeps.plan(
                self,
                sweep,
                scheduler,
                cfg,
                workspace,
                parent_run_id,
                check_limits=False,
                sweep_id=sweep_id,
            )

        return _sweeps.run(self, scheduler, sweep.parallel, plan_for)

    def dryrun_resume_sweep(self, sweep_handle: AppHandle) -> SweepPlan:
        """The plan that runs again only the trials of a sweep that did not succeed."""
        from torchx.runner import _sweeps

        return _sweeps.resume(self, sweep_handle)

    def resume_sweep(self, sweep_handle: AppHandle) -> AppHandle:
        """Submit again the trials of the sweep that did not succeed; the sweep handle.
        Refused at once while another resume of the sweep runs; meanwhile its status
        says it is being resumed, and ``wait_sweep`` waits on."""
        from torchx.runner import _sweeps

        return _sweeps.resume_and_submit(self, sweep_handle)

    def sweep_status(self, sweep_handle: AppHandle) -> SweepStatus:
        """Every trial's index, arguments, state, attempts, exit code and handle."""
        from torchx.runner import _sweeps

        return _sweeps.status(self, sweep_handle)

    def wait_sweep(
        self, sweep_handle: AppHandle, wait_interval: float = 1.0, timeout: float | None = None
    ) -> SweepStatus:
        """Block until every trial ended, or ``timeout`` seconds passed; the sweep's status
        then (not terminal when the timeout ran out first)."""
        from torchx.runner import _sweeps

        return _sweeps.wait(self, sweep_handle, wait_interval, timeout)

    def sweep_trial_handle(self, sweep_handle: AppHandle, index: int) -> AppHandle | None:
        """The app handle of trial ``index``'s latest attempt (None: not submitted yet)."""
        from torchx.runner import _sweeps

        return _sweeps.trial_handle(_sweeps.record_of(sweep_handle), index)

    def cancel_sweep(self, sweep_handle: AppHandle) -> None:
        """End every trial of the sweep, and submit no more."""
        from torchx.runner import _sweeps

        _sweeps.cancel(self, sweep_handle)

    # -- by handle --------------------------------------------------------------------

    def _resolve(self, app_handle: AppHandle) -> tuple[Scheduler[Any], str]:
        scheduler, _session, app_id = parse_app_handle(app_handle)
        return self._scheduler(scheduler), app_id

    def _require(self, app_handle: AppHandle) -> tuple[Scheduler[Any], str]:
        sched, app_id = self._resolve(app_handle)
        if not sched.exists(app_id):
            raise UnknownAppException(
                app_handle,
                f"no such app on {sched.backend}; `torchx list -s {sched.backend}` shows the "
                "known apps",
            )
        return sched, app_id

    @_recorded
    def status(self, app_handle: AppHandle) -> AppStatus | None:
        """The app's status, or None if its scheduler does not know it."""
        from torchx.runner._ui_url import app_status

        sched, app_id = self._resolve(app_handle)
        return app_status(sched.describe(app_id))

    def _statuses(self, app_handles: Sequence[AppHandle]) -> dict[AppHandle, AppStatus | None]:
        """``status`` of each app, each scheduler asked once for all of its apps
        (``describe_many``: one sacct on Slurm) where it answers for many at once."""
        from torchx.runner._ui_url import app_status

        asked: dict[str, list[AppHandle]] = {}
        for handle in app_handles:
            asked.setdefault(parse_app_handle(handle)[0], []).append(handle)
        statuses: dict[AppHandle, AppStatus | None] = {}
        for name, handles in asked.items():
            sched = self._scheduler(name)
            by_id = _by_app_id(handles)
            many = getattr(sched, "describe_many", None)  # a duck-typed scheduler may lack it
            descs = many(list(by_id)) if many else {a: sched.describe(a) for a in by_id}
            for app_id, same in by_id.items():
                statuses.update(dict.fromkeys(same, app_status(descs.get(app_id))))
        return statuses

    @_recorded
    def wait(
        self,
        app_handle: AppHandle,
        wait_interval: float = 10,
        timeout: float | None = None,
    ) -> AppStatus | None:
        """Block until the app ends (or ``timeout`` seconds pass); its status then.

        The scheduler is asked again at least every ``wait_interval`` seconds (schedulers
        that are told when an app ends answer sooner). None if it does not know the app.
        """
        import time

        sched, app_id = self._resolve(app_handle)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = wait_interval if wait_interval > 0 else None
            if deadline is not None:
                left = max(deadline - time.monotonic(), 0.0)
                step = left if step is None else min(step, left)
            desc = sched.wait(app_id, step)
            if desc is None:
                return None
            if desc.to_status().is_terminal() or (
                deadline is not None and time.monotonic() >= deadline
            ):
                from torchx.runner._ui_url import app_status

                return app_status(desc)

    def wait_each(
        self,
        app_handles: Sequence[AppHandle],
        timeout: float | None = None,
        wait_interval: float = 10,
    ) -> Iterator[tuple[AppHandle, AppStatus | SweepStatus | None]]:
        """Wait on several apps at once: ``(handle, status)`` for each, in the order they end.

        A sweep's handle is waited on as ``wait_sweep`` does, its status a ``SweepStatus``.
        After ``timeout`` seconds the apps still running come last, with their current
        status; None is the status of an app its scheduler does not know. A handle is a
        sweep's when this machine holds the sweep's record (an app named ``sweep`` has an
        id of a sweep's shape, and is waited on as an app).
        """
        from torchx.runner._sweep_record import recorded_sweep_id
        from torchx.runner._wait import wait_each

        # Apps of a scheduler that answers for many at once are watched together: one
        # backend query per look for all of them (one sacct on Slurm), not one per app.
        together: dict[str, str] = {}
        for handle in app_handles:
            if recorded_sweep_id(handle) is not None:
                continue  # its record names its scheduler
            sched, _ = self._resolve(handle)  # a bad handle fails here, before anything waits
            answers_many = getattr(sched, "answers_many", None)  # a duck-typed scheduler
            if answers_many is not None and answers_many():
                together[handle] = parse_app_handle(handle)[0]
        return wait_each(
            self._wait_app_or_sweep,
            app_handles,
            timeout,
            wait_interval,
            self._wait_together,
            together,
        )

    def _wait_app_or_sweep(
        self, handle: AppHandle, wait_interval: float, timeout: float | None
    ) -> AppStatus | SweepStatus | None:
        from torchx.runner._sweep_record import recorded_sweep_id

        if recorded_sweep_id(handle) is None:
            return self.wait(handle, wait_interval, timeout)
        return self.wait_sweep(handle, wait_interval, timeout)

    def _wait_together(
        self, app_handles: Sequence[AppHandle], wait_interval: float, timeout: float | None
    ) -> Iterator[tuple[AppHandle, AppStatus | None]]:
        """``wait_each`` of apps of one scheduler, through its ``wait_many``."""
        from torchx.runner._ui_url import app_status

        sched, _ = self._resolve(app_handles[0])
        by_id = _by_app_id(app_handles)
        for app_id, desc in sched.wait_many(list(by_id), timeout, wait_interval):
            status = app_status(desc)
            for handle in by_id[app_id]:
                yield handle, status

    def wait_all(
        self,
        app_handles: Sequence[AppHandle],
        timeout: float | None = None,
        wait_interval: float = 10,
    ) -> bool:
        """Wait until every app ended (or ``timeout`` seconds); True if all SUCCEEDED.

        ``wait_each`` gives each app's status as it ends.
        """
        from torchx.specs import AppState

        results = list(self.wait_each(app_handles, timeout, wait_interval))
        return all(s is not None and s.state == AppState.SUCCEEDED for _, s in results)

    @_recorded
    def describe(self, app_handle: AppHandle) -> AppDef | None:
        """The app as its scheduler can rebuild it, or None if it does not know the app."""
        sched, app_id = self._resolve(app_handle)
        desc = sched.describe(app_id)
        if desc is None:
            return None
        return desc.app if desc.app is not None else AppDef(name=app_id, roles=desc.roles)

    @_recorded
    def log_lines(
        self,
        app_handle: AppHandle,
        role_name: str,
        k: int = 0,
        regex: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        should_tail: bool = False,
        streams: Stream | None = None,
    ) -> Iterable[str]:
        """Output lines of replica ``k`` of ``role_name`` (see ``Scheduler.log_iter``)."""
        sched, app_id = self._require(app_handle)
        return sched.log_iter(
            app_id, role_name, k, regex, since, until, should_tail, streams=streams
        )

    def log_lines_timed(
        self, app_handle: AppHandle, role_name: str, k: int = 0, **options: Unpack[LogOptions]
    ) -> Iterable[tuple[datetime | None, str]]:
        """``log_lines`` (same options) with the time each line was written, from schedulers
        that keep it (see ``Scheduler.log_iter_timed``); others refuse, naming the scheduler."""
        sched, app_id = self._require(app_handle)
        return sched.log_iter_timed(app_id, role_name, k, **options)

    @_recorded
    def cancel(self, app_handle: AppHandle) -> None:
        """Stop the app; a no-op if it already ended or its scheduler does not know it."""
        sched, app_id = self._resolve(app_handle)
        if sched.exists(app_id):
            sched.cancel(app_id)

    def ended_app_holds_objects(self, app_handle: AppHandle) -> bool:
        """Whether the app's scheduler keeps objects of an ended app that ``cancel`` deletes
        (Kubernetes: its Jobs, Service and pods), so cancelling it still does something."""
        sched, app_id = self._resolve(app_handle)
        return sched.ended_app_holds_objects(app_id)

    def stop(self, app_handle: AppHandle) -> None:
        """pytorch/torchx's name for ``cancel``."""
        self.cancel(app_handle)

    def requeue(self, app_handle: AppHandle) -> AppStatus | None:
        """Stand in for a preemption: the app is warned, checkpoints, stops and is started
        again under the same handle (torchx.runtime.preemption is the app's side). Returns
        its status once the new attempt started, or, on Slurm, once the job is queued again
        with its begin-time hold lifted (PENDING until Slurm starts it). Schedulers that can
        do this have a ``requeue(app_id)`` method; for the others this raises SchedulerError
        saying so."""
        sched, app_id = self._require(app_handle)
        requeue = getattr(sched, "requeue", None)
        if requeue is None:
            raise SchedulerError(
                sched.backend,
                f"{sched.backend} cannot requeue an app on request",
                "cancel it and run it again; the app resumes if it reads its checkpoint",
            )
        from torchx.runner._ui_url import app_status

        return app_status(requeue(app_id))

    def list_newest(
        self,
        scheduler: str = DEFAULT_SCHEDULER,
        submitted_after: datetime | None = None,
        cfg: Mapping[str, CfgVal] | None = None,
    ) -> Iterator[ListAppResponse]:
        """The apps ``scheduler`` knows, newest first, submitted after ``submitted_after``.

        Schedulers that can (local ones) read each app only when it is asked for, so
        taking the newest few is cheap however many apps there are.
        """
        from torchx.runner._listing import newest_first

        sched = self._scheduler(scheduler)
        for app in newest_first(sched, submitted_after, lambda: self._cfg(scheduler, cfg)):
            app.app_handle = make_app_handle(scheduler, self._name, app.app_id)
            yield app

    def prune(self, scheduler: str, ended_before: datetime) -> list[AppHandle]:
        """Remove the records and logs of ``scheduler``'s apps that ended before
        ``ended_before`` (local schedulers; a running app is never removed)."""
        sched = self._scheduler(scheduler)
        prune = getattr(sched, "prune", None)
        if prune is None:
            raise SpecsError(
                "scheduler",
                scheduler,
                "it keeps no records torchx can prune; only local schedulers do",
            )
        return [make_app_handle(scheduler, self._name, a) for a in prune(ended_before)]

    @_recorded
    def list(
        self, scheduler: str = DEFAULT_SCHEDULER, cfg: Mapping[str, CfgVal] | None = None
    ) -> list[ListAppResponse]:
        """The apps ``scheduler`` knows, each with its handle filled in.

        ``cfg`` (with the config files' run options) reaches schedulers whose ``list``
        takes a ``cfg`` argument (which cluster to ask: ``ray``'s ``address``).
        """
        from torchx.runner._listing import list_apps

        apps = list_apps(self._scheduler(scheduler), lambda: self._cfg(scheduler, cfg))
        for app in apps:
            app.app_handle = make_app_handle(scheduler, self._name, app.app_id)
        return apps


def _by_app_id(app_handles: Iterable[AppHandle]) -> dict[str, list[AppHandle]]:
    """The handles of one scheduler's apps by app id, in order: handles of other sessions
    may name one app, which is asked about once."""
    by_id: dict[str, list[AppHandle]] = {}
    for handle in app_handles:
        by_id.setdefault(parse_app_handle(handle)[2], []).append(handle)
    return by_id


def _takes(schema: ComponentSchema, key: str) -> str:
    """The fix for a default ``key`` naming no argument of ``schema``: the closest
    argument when one is near, else all of them (a second, less near one is as often
    unrelated: ``image`` for ``mgs``)."""
    options = list(schema.options)
    if close_matches(key, options, n=1):
        return f"{schema.name} has no such argument; {closest(key, options, n=1)}"
    return f"{schema.name} has no such argument; it takes {', '.join(schema.options) or 'none'}"


def _as_argv(args: ComponentArgs) -> list[str]:
    if isinstance(args, str):
        raise SpecsError("component_args", args, "give a list of CLI tokens or a mapping")
    if isinstance(args, Mapping):
        argv = []
        for key, value in args.items():
            if not isinstance(value, (str, int, float, bool)):
                raise SpecsError(
                    f"component_args[{key!r}]", value, "give a str, int, float or bool value"
                )
            argv.append(f"--{key}={str(value).lower() if isinstance(value, bool) else value}")
        return argv
    return list(args)


def scheduler_factories() -> Mapping[str, SchedulerFactory]:
    """The schedulers a new Runner of ``get_runner`` sees, by name: the registered ones
    (built in, and the ``torchx.schedulers`` entry points), or what a patch of
    ``torchx.runner.api.get_scheduler_factories`` gives (0.7's users and tests make one).
    That module is read only when loaded: importing it to look would load the event
    recorder."""
    api = sys.modules.get("torchx.runner.api")
    factories: Callable[[], Mapping[str, SchedulerFactory]] = getattr(
        api, "get_scheduler_factories", get_scheduler_factories
    )
    return factories()


def get_runner(
    name: str | None = None,
    component_defaults: Mapping[str, Mapping[str, str]] | None = None,
    **scheduler_params: Any,
) -> Runner:
    """A Runner over every registered scheduler.

    ``name`` is the session in the handles it returns (default ``DEFAULT_SESSION``,
    ``torchx``).
    ``scheduler_params`` go to the factories that declare them (``state_dir=`` goes to
    local_cwd only); ``SCHEDULER={...}`` gives parameters to one scheduler
    (``get_runner(slurm={"use_sacct": False})``).
    """
    return Runner(
        name or DEFAULT_SESSION,
        scheduler_factories(),
        component_defaults=component_defaults,
        scheduler_params=scheduler_params,
    )
