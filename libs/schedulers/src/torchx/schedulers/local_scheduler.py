"""local_cwd and local_dir: run every replica as a process on this machine, in a directory.

Where a role runs is up to the scheduler's image provider: ``local_cwd`` uses the role's
image when it is a directory and the current directory otherwise (:class:`CWDImageProvider`);
``local_dir`` requires the image to be a directory (:class:`LocalDirectoryImageProvider`).

Each app gets a small detached supervisor process (see ``_local_supervisor``) that owns its
replicas and keeps the app's state on disk, so ``describe``, ``log_iter``, ``cancel`` and
``list`` work from any process, also after the launcher has exited.

Where things are:

- ``<state dir>`` is ``$XDG_STATE_HOME/torchx`` (default ``~/.local/state/torchx``), or
  the ``state_dir`` given to the scheduler;
- ``<log_dir>/<session>/<app_id>/<role>/<k>/{stdout,stderr,combined}.log`` hold each
  replica's output, where pytorch/torchx 0.7 put it (``<session>`` is the runner's name,
  ``torchx`` by default); ``log_dir`` is a run option, by default
  ``<state dir>/local_cwd/logs``;
- ``<state dir>/local_cwd/apps/<app_id>`` links to the app's directory, wherever its logs
  went, which is how other processes find it.

The code, by job: this module submits, describes, cancels and reads logs;
``_local_request`` builds the request, ``_local_images`` places roles, ``_local_records``
finds, reads and lists apps, ``_local_logs`` reads log files. The supervisor
(``_local_supervisor``) and what it imports (``_local_replica``, ``_local_watchdog``,
``_local_processes``, ``_local_state_files``) use the standard library alone.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from torchx.schedulers._api import (
    DescribeAppResponse,
    ListAppResponse,
    LogRequest,
    Scheduler,
    in_window,
)
from torchx.schedulers._errors import SchedulerError, check_params

# pytorch/torchx 0.7's module-level names, for code that imports them from here.
from torchx.schedulers._local_compat import (
    COMBINED_LOG,
    ENV_CUDA_VISIBLE_DEVICES,
    NA,
    NONE,
    STDERR_LOG,
    STDOUT_LOG,
    LocalOpts,
    LogIterator,
    PopenProtocol,
    PopenRequest,
    ReplicaParam,
    SignalException,
    raise_on_sigterm,
)
from torchx.schedulers._local_group_start import GROUP, SUPERVISOR, call_off, start_group, tell
from torchx.schedulers._local_group_start import START_SCRIPT as START_SCRIPT
from torchx.schedulers._local_images import (
    CWDImageProvider,
    ImageProvider,
    LocalDirectoryImageProvider,
    join_path,
    resolve_entrypoint,
)
from torchx.schedulers._local_processes import kill_recorded_groups, wait_for_exit
from torchx.schedulers._local_records import (
    APP_ID,
    AppStateError,
    LocalAppRecords,
    default_state_dir,
    describe_response,
    replica_status,
    state_of,
)
from torchx.schedulers._local_request import (
    LocalReplicaParams,
    LocalRequest,
    app_from_json,
    app_to_json,
    format_request,
    free_port,
    requeue_cap,
    split_gpus,
    visible_gpus,
    workspace_copy_of,
)
from torchx.schedulers._local_run_opts import check_dir, local_run_opts
from torchx.schedulers._local_state_files import (
    CANCEL_FILE,
    GO,
    GO_ON_STDIN,
    HOUSEKEEPING_INTERVAL,
    MAX_GRACE_S,
    META_DIR,
    NO_SPACE,
    REQUEST_FILE,
    RESERVE_FILE,
    STATE_FILE,
    STATE_VERSION,
    SUPERVISOR_LOG,
    make_reserve,
    reserve_bytes,
    write_new,
)
from torchx.schedulers._local_workspace import make_workspace_copy
from torchx.schedulers._replicas import role_replicas
from torchx.schedulers.ids import make_unique
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppStatus,
    CfgVal,
    RetryPolicy,
    RoleStatus,
    SpecsError,
    is_terminal,
    runopts,
)

__all__ = [
    "COMBINED_LOG",
    "ENV_CUDA_VISIBLE_DEVICES",
    "NA",
    "NONE",
    "STDERR_LOG",
    "STDOUT_LOG",
    "AppStateError",
    "CWDImageProvider",
    "ImageProvider",
    "LocalDirectoryImageProvider",
    "LocalOpts",
    "LocalReplicaParams",
    "LocalRequest",
    "LocalScheduler",
    "LogIterator",
    "PopenProtocol",
    "PopenRequest",
    "ReplicaParam",
    "SignalException",
    "create_dir_scheduler",
    "create_scheduler",
    "default_state_dir",
    "split_gpus",
    "visible_gpus",
    "wait_for_exit",
]

BACKEND = "local_cwd"
DIR_BACKEND = "local_dir"


class LocalScheduler(Scheduler[LocalRequest]):
    """Runs apps as local processes; see the module docstring for where things are kept."""

    pre_proc_backend = "local"  # pytorch/torchx 0.7's LocalScheduler backend

    def __init__(
        self,
        session_name: str = "torchx",
        image_provider_class: Callable[[Mapping[str, CfgVal]], ImageProvider] = CWDImageProvider,
        cache_size: int = 100,
        extra_paths: list[str] | None = None,
        state_dir: str | os.PathLike[str] | None = None,
        backend: str = BACKEND,
    ) -> None:
        super().__init__(backend, session_name)
        if not isinstance(cache_size, int) or isinstance(cache_size, bool) or cache_size < 1:
            raise SpecsError("cache_size", cache_size, "give a whole number of apps >= 1")
        self.image_provider_class = image_provider_class
        self.cache_size = cache_size
        self.extra_paths = list(extra_paths or [])
        self.state_dir = Path(state_dir) if state_dir is not None else default_state_dir()
        self._index = self.state_dir / BACKEND / "apps"
        self._supervisors: dict[str, subprocess.Popen[bytes]] = {}
        self._records = LocalAppRecords(backend, self._index, cache_size, self._supervisors)
        raise_on_sigterm()

    # -- submission -------------------------------------------------------------------

    def _run_opts(self) -> runopts:
        return local_run_opts(str(self.state_dir / BACKEND / "logs"))

    def with_workspace(
        self, app: AppDef, cfg: Mapping[str, CfgVal], workspace: str
    ) -> tuple[AppDef, dict[str, CfgVal]]:
        # Copied when submitted, into the app's own directory: a dryrun writes nothing,
        # and the copy goes when the app's record does (``torchx list --prune``).
        return app, {**cfg, "workspace": self._workspace_path(workspace)}

    def _log_root(self, cfg: Mapping[str, CfgVal]) -> str:
        given = cfg.get("log_dir")
        root = str(given) if given else str(self.state_dir / BACKEND / "logs")
        return os.path.abspath(os.path.expanduser(root))

    def _apps_dir(self, cfg: Mapping[str, CfgVal]) -> str:
        """The directory the apps' directories go in: ``<log_dir>/<session>``."""
        return os.path.join(self._log_root(cfg), self._session_dir())

    def _session_dir(self) -> str:
        name = self.session_name
        if not APP_ID.match(name):
            raise SpecsError(
                "session name",
                name,
                "it names a directory under log_dir; use letters, digits and -_.",
            )
        return name

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[LocalRequest]:
        return self._dryrun_finding(app, cfg, {})

    def submit_dryrun_group(
        self,
        apps: Sequence[AppDef],
        cfg: Mapping[str, CfgVal] | None = None,
        *,
        scheduler: str | None = None,
    ) -> list[AppDryRunInfo[LocalRequest]]:
        """``submit_dryrun`` of each of ``apps`` (a group for ``schedule_group``): the run
        options are resolved once, and each program is looked up on PATH once for all."""
        resolved = self.run_opts().resolve(cfg)
        found: dict[tuple[str, str], str | None] = {}
        apps_dir: str | None = None  # where every app's directory goes: the same for all

        def submit(app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[LocalRequest]:
            nonlocal apps_dir
            if apps_dir is None:
                apps_dir = self._apps_dir(cfg)
            return self._dryrun_finding(app, cfg, found, apps_dir)

        return [self._dryrun_resolved(app, dict(resolved), submit, scheduler) for app in apps]

    def _dryrun_finding(
        self,
        app: AppDef,
        cfg: dict[str, CfgVal],
        found: dict[tuple[str, str], str | None],
        apps_dir: str | None = None,
    ) -> AppDryRunInfo[LocalRequest]:
        """The request of ``app``; ``found`` keeps what each PATH lookup found, so that a
        program is looked for once however many replicas (or apps) run it. ``apps_dir``:
        ``_apps_dir(cfg)``, where the caller has it already."""

        app_id = make_unique(app.name)
        app_dir = os.path.join(self._apps_dir(cfg) if apps_dir is None else apps_dir, app_id)
        cwd_opt = cfg.get("cwd")
        given = cfg.get("workspace")
        workspace = None if given is None else check_dir("workspace", given)
        if workspace is not None:  # the replicas run in its copy, made on submit
            cwd_opt = workspace_copy_of(app_dir)
        elif cwd_opt is not None:
            check_dir("cwd", cwd_opt)

        def before_copy(path: str) -> str:
            return LocalRequest.before_copy_of(path, app_dir, workspace)

        def which(name: str, path: str) -> str | None:
            if (name, path) not in found:
                # the workspace copy is not made yet: look in what it will copy
                now = os.pathsep.join(before_copy(p) for p in path.split(os.pathsep))
                found[name, path] = shutil.which(name, path=now)
            return found[name, path]

        gpu_slices: list[list[str]] | None = None
        if cfg.get("auto_set_cuda_visible_devices"):
            counts = [max(r.resource.gpu, 0) for r in app.roles for _ in range(r.num_replicas)]
            gpu_slices = split_gpus(counts, visible_gpus()) if any(counts) else None
        port = free_port()
        provider = self.image_provider_class(cfg)
        replicas: list[LocalReplicaParams] = []
        roles: dict[str, dict[str, Any]] = {}
        n = 0
        for role in app.roles:
            img_root = provider.fetch_role(role)
            if cwd_opt is not None:
                cwd = os.path.abspath(str(cwd_opt))
            else:
                cwd = provider.get_cwd(role.image) or img_root
            roles[role.name] = {
                "max_retries": role.max_retries,
                "retry_policy": RetryPolicy(role.retry_policy).value,
                "num_replicas": role.num_replicas,
            }
            for replica in role_replicas(
                role,
                app_id=app_id,
                rank0_host="127.0.0.1",
                master_port=port,
                img_root=img_root,
                same_host=True,
            ):
                k, filled, env = replica.k, replica.filled, replica.env
                if self.extra_paths:
                    env["PATH"] = join_path(
                        *self.extra_paths, env.get("PATH") or os.environ.get("PATH")
                    )
                # A bare entrypoint missing from PATH runs from the working directory
                # (``train.sh`` in the image directory, as with pytorch/torchx's local
                # schedulers), else from beside this Python: the ``bin`` of the environment
                # torchx runs in, whose ``torchrun`` a virtual environment that was never
                # activated keeps off PATH. That directory then ends PATH (PATH's own
                # entries still win); other requests keep the environment as it is.
                path = env.get("PATH") or os.environ.get("PATH", os.defpath)
                if os.sep not in filled.entrypoint and not which(filled.entrypoint, path):
                    for fallback in (cwd, os.path.dirname(sys.executable)):
                        if fallback and which(filled.entrypoint, fallback):
                            env["PATH"] = join_path(path, fallback)
                            break
                if cfg.get("prepend_cwd"):
                    env["PATH"] = join_path(cwd, env.get("PATH") or path)
                if gpu_slices is not None:
                    env["CUDA_VISIBLE_DEVICES"] = ",".join(gpu_slices[n])
                entrypoint = provider.get_entrypoint(img_root, filled)
                if k == 0:
                    resolve_entrypoint(role, entrypoint, before_copy(cwd), env, which)
                replicas.append(
                    LocalReplicaParams(role.name, k, [entrypoint, *filled.args], env, cwd)
                )
                n += 1
        grace = cfg.get("cancel_grace_seconds")
        if grace is not None and (
            not isinstance(grace, (int, float))
            or not math.isfinite(grace)
            or not 0 <= grace <= MAX_GRACE_S
        ):
            # The supervisor waits this long between SIGTERM and SIGKILL: it must be a time.
            raise SpecsError(
                "run option 'cancel_grace_seconds'",
                grace,
                f"give a finite number of seconds between 0 and {MAX_GRACE_S:.0f}",
            )
        req = LocalRequest(
            app_id=app_id,
            app_dir=app_dir,
            replicas=replicas,
            roles=roles,
            cancel_grace_s=float(grace) if isinstance(grace, (int, float)) else 5.0,
            max_requeues=requeue_cap(cfg.get("max_requeues")),
            app=app_to_json(app),
            workspace=workspace,
        )
        return AppDryRunInfo(req, format_request)

    def _make_app_dir(self, req: LocalRequest) -> str:
        """Create the app's directory, refusing an id in use; returns its meta directory."""
        meta = os.path.join(req.app_dir, META_DIR)
        try:
            try:
                os.mkdir(req.app_dir)
            except FileNotFoundError:  # the first app of its session (or log_dir)
                os.makedirs(os.path.dirname(req.app_dir), exist_ok=True)
                os.mkdir(req.app_dir)
            os.mkdir(meta)
        except FileExistsError:
            raise SpecsError(
                "app id", req.app_id, "already used; dry-run again for a new id"
            ) from None
        except OSError as e:
            self._forget_half_made(req)
            if e.errno in NO_SPACE:
                raise self._no_room(req, e.filename or req.app_dir, e) from None
            raise SpecsError(
                "run option 'log_dir'",
                os.path.dirname(os.path.dirname(req.app_dir)),
                f"cannot create {req.app_dir} ({e.strerror}); give a writable directory "
                "with -cfg log_dir=DIR",
            ) from None
        return meta

    def _write_app_files(self, req: LocalRequest, meta: str) -> None:
        """The request, the PENDING state, the reserve and the index entry; raises OSError
        with ``filename`` set to the file that could not be written."""
        where = os.path.join(meta, REQUEST_FILE)
        try:
            write_new(where, req.to_json())
            where = os.path.join(meta, STATE_FILE)
            write_new(where, {"version": STATE_VERSION, "app_id": req.app_id, "state": "PENDING"})
            where = os.path.join(meta, RESERVE_FILE)
            make_reserve(meta, reserve_bytes([r.role for r in req.replicas]))
            where = str(self._index / req.app_id)
            self._records.add(req.app_id, req.app_dir)
        except OSError as e:
            e.filename = where
            raise

    def _write_failed(self, req: LocalRequest, where: str, e: OSError) -> SchedulerError:
        if e.errno in NO_SPACE:
            return self._no_room(req, where, e)
        return SchedulerError(
            self.backend,
            f"cannot start app {req.app_id}: {where}: {e.strerror or e}",
            "nothing of it was kept; fix the cause and submit again",
        )

    def _copy_workspace(self, req: LocalRequest, made: str | None = None) -> None:
        """Copy the app's workspace into its directory, if it has one (so the copy lives and
        goes with the app's record); ``made``: the copy of the same workspace made for
        another app of its group, whose files it then shares. Nothing of the app is kept
        if that fails."""
        if req.workspace is None:
            return
        try:
            make_workspace_copy(req, str(self.state_dir), made)
        except BaseException as e:
            self._forget_half_made(req)
            if isinstance(e, OSError):
                raise self._write_failed(req, e.filename or req.workspace_copy, e) from None
            raise

    def schedule(self, dryrun_info: AppDryRunInfo[LocalRequest]) -> str:
        req = dryrun_info.request
        meta = self._make_app_dir(req)
        self._copy_workspace(req)
        # Every file of the app, or none: a half-made app would be listed by nobody. The
        # supervisor is started first and reads the files once told they are all written
        # (``GO``): its interpreter starts meanwhile.
        where = meta
        supervisor: subprocess.Popen[bytes] | None = None
        try:
            where = os.path.join(meta, SUPERVISOR_LOG)
            with open(where, "ab") as log:
                where = f"its supervisor ({' '.join(SUPERVISOR)})"
                supervisor = subprocess.Popen(
                    [*SUPERVISOR, req.app_dir, GO_ON_STDIN],
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    close_fds=True,
                )
            try:
                self._write_app_files(req, meta)
            except OSError as e:
                where = str(e.filename)
                raise
            where = f"its supervisor ({' '.join(SUPERVISOR)})"
            assert supervisor.stdin is not None
            supervisor.stdin.write(GO)
            supervisor.stdin.close()
            self._supervisors[req.app_id] = supervisor
        except OSError as e:
            call_off(supervisor)
            self._forget_half_made(req)
            raise self._write_failed(req, where, e) from None
        except BaseException:
            call_off(supervisor)
            raise
        return req.app_id

    @staticmethod
    def start_group(
        parallel: int, name: str, log_path: str, *, new_log: bool = False
    ) -> subprocess.Popen[bytes]:
        """The process of a group not yet told its apps, for ``schedule_group``: started
        before their requests are made, its interpreter starts meanwhile. Give it to
        ``schedule_group`` with the same arguments, or end it with ``call_off_group``.
        ``new_log``: ``log_path`` must not exist yet (FileExistsError)."""
        return start_group(parallel, name, log_path, new_log=new_log)

    @staticmethod
    def call_off_group(group: subprocess.Popen[bytes]) -> bool:
        """End a group from ``start_group`` not told its apps (at once if called off
        already): True once it exited. False, doing nothing, once told: its apps run."""
        return call_off(group)

    def schedule_group(
        self,
        dryrun_infos: Sequence[AppDryRunInfo[LocalRequest]],
        parallel: int,
        name: str,
        log_path: str,
        group: subprocess.Popen[bytes] | None = None,
        written: Callable[[subprocess.Popen[bytes]], object] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Submit the apps as ONE supervised group: one process (``_local_group``, named
        ``name`` on its command line) runs at most ``parallel`` of them at once (0: all),
        each supervised as an app of its own, so every app id works as ``schedule``'s do.
        Every app's files are written first, or none; returns the group's process.

        The group is started first (here, or given: ``start_group`` with these
        arguments) and told the apps once all their files are written: its interpreter
        starts meanwhile (as ``schedule`` does with a supervisor); ``written(group)`` is
        called in between (the caller records the apps before they can run). A failure
        before the group is told (``written``'s too; the group ended: a SchedulerError)
        calls it off, a given one too, and keeps nothing; once told, the apps run."""
        if group is None:
            group = start_group(parallel, name, log_path)
        made: list[LocalRequest] = []
        copies: dict[str, str] = {}  # workspace -> its copy made for the first app using it
        try:
            for info in dryrun_infos:
                req = info.request
                meta = self._make_app_dir(req)
                made.append(req)
                if req.workspace is not None:  # one copy's bytes for every trial of a sweep
                    self._copy_workspace(req, copies.get(req.workspace))
                    copies.setdefault(req.workspace, req.workspace_copy)
                try:
                    # (each app's supervisor.log is made by the group when it starts it)
                    self._write_app_files(req, meta)
                except OSError as e:
                    raise self._write_failed(req, str(e.filename or meta), e) from None
            if written is not None:
                written(group)
            try:
                tell(group, [r.app_dir for r in made])
            except OSError:
                if group.returncode is None:  # told after all (ended by tell otherwise)
                    raise
                raise SchedulerError(
                    self.backend,
                    f"the group {name} ({' '.join(GROUP)}) ended with exit code"
                    f" {group.returncode} before it was told its apps",
                    "nothing of them was kept; submit again",
                ) from None
        except BaseException:
            if not call_off(group):  # told: its apps run, and are kept
                raise
            for req in made:
                self._forget_half_made(req)
            raise
        return group

    def _no_room(self, req: LocalRequest, path: str, e: OSError) -> SchedulerError:
        return SchedulerError(
            self.backend,
            f"cannot start app {req.app_id}: no space left for {path} ({e.strerror})",
            "nothing of it was kept; free space there, or give another directory with "
            "-cfg log_dir=DIR",
        )

    def _forget_half_made(self, req: LocalRequest) -> None:
        """Remove what ``schedule`` made of an app it could not start."""
        link = self._index / req.app_id
        with contextlib.suppress(OSError):
            if os.readlink(link) == req.app_dir:
                os.unlink(link)
        shutil.rmtree(req.app_dir, ignore_errors=True)

    # -- finding apps -----------------------------------------------------------------

    def _app_dir(self, app_id: str) -> str | None:
        return self._records.app_dir(app_id)

    # -- inspection -------------------------------------------------------------------

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        app_dir = self._app_dir(app_id)
        if app_dir is None:
            return None
        request, state = self._records.current_state(app_id, app_dir)
        statuses: dict[str, RoleStatus] = {
            name: RoleStatus(name) for name in request.get("roles", {})
        }
        by_replica = {(r["role"], r["id"]): r for r in state.get("replicas", [])}
        for spec in request.get("replicas", []):
            rec = by_replica.get((spec["role"], spec["id"]), {})
            statuses[spec["role"]].replicas.append(replica_status(spec["role"], spec["id"], rec))
        app = app_from_json(request["app"]) if request.get("app") else None
        return describe_response(app_id, app_dir, state, list(statuses.values()), app)

    def statuses(self, app_ids: Sequence[str]) -> dict[str, AppStatus | None]:
        """Each app's status (None: no such app), read from the app's state file alone:
        its request (the app, its roles) is not read, nor parsed into an AppDef. For
        callers that look at many apps at once (a sweep's trials). Its state, restarts,
        messages and the replicas that started are those of ``describe(app_id)``; a
        replica that never started is not listed."""
        out: dict[str, AppStatus | None] = {}
        for app_id in dict.fromkeys(app_ids):
            app_dir = self._app_dir(app_id)
            if app_dir is None:
                out[app_id] = None
                continue
            _, state = self._records.current_state(app_id, app_dir, with_request=False)
            roles: dict[str, RoleStatus] = {}
            for rec in state.get("replicas", []):
                role = roles.setdefault(rec["role"], RoleStatus(rec["role"]))
                role.replicas.append(replica_status(rec["role"], rec["id"], rec))
            response = describe_response(app_id, app_dir, state, list(roles.values()))
            out[app_id] = response.to_status()
        return out

    def list(self) -> list[ListAppResponse]:
        return self._records.list_apps()

    def list_newest(self, submitted_after: datetime | None = None) -> Iterator[ListAppResponse]:
        """The apps newest first, each read only when asked for (``torchx list``)."""
        from torchx.schedulers._local_retention import iter_newest

        return iter_newest(self._records, submitted_after)

    def prune(self, ended_before: datetime) -> tuple[str, ...]:
        """Remove the records and logs of apps that ended before ``ended_before``; never
        of a running app. Returns the ids removed."""
        from torchx.schedulers._local_retention import prune

        return tuple(prune(self._records, ended_before))

    # While no supervisor pid is recorded yet (it is starting), ``wait`` looks again soon.
    _wait_poll_s = (0.002, 0.05)

    def _await_end(self, app_id: str, timeout: float | None) -> bool:
        """Woken by the app's supervisor's exit, not by polling."""
        app_dir = self._app_dir(app_id)
        _, state = self._records.read(app_dir) if app_dir else ({}, {})
        return self._wait_for_exit(app_id, state, timeout)

    def _wait_for_exit(self, app_id: str, state: Mapping[str, Any], timeout: float | None) -> bool:
        """Sleep until the supervisor exits or ``timeout``; False if there is nothing to watch."""
        own = self._supervisors.get(app_id)
        pid = own.pid if own is not None else state.get("supervisor_pid")
        if pid is None or (own is None and state.get("supervisor_shared")):
            return False  # nothing to watch, or it goes on to other apps (a group's worker)
        if own is None and self._records.supervisor_alive(app_id, state) is False:
            return True
        if not wait_for_exit(int(pid), timeout):
            time.sleep(0.01 if timeout is None else min(0.01, timeout))
            return True
        if own is not None:
            own.poll()
        return True

    def _replica_log(self, request: LogRequest) -> Iterable[str]:
        return in_window(self._timed_lines(request), request.since, request.until)

    def _replica_log_timed(self, request: LogRequest) -> Iterable[tuple[datetime | None, str]]:
        lo = request.since.timestamp() if request.since is not None else None
        hi = request.until.timestamp() if request.until is not None else None
        return (
            (datetime.fromtimestamp(t) if t else None, line)
            for t, line in self._timed_lines(request)
            if (lo is None or t >= lo) and (hi is None or t <= hi)
        )

    def _timed_lines(self, request: LogRequest) -> Iterator[tuple[float, str]]:
        """The replica's ``(unix time, line)`` pairs; an unknown app, role or replica is an
        error here, before any line is read."""
        app_id, role_name, k = request.app_id, request.role_name, request.k
        app_dir = self._app_dir(app_id)
        if app_dir is None:
            raise SpecsError(
                "app id", app_id, f"no such {self.backend} app; `list` shows the known ones"
            )
        records, _ = self._records.read(app_dir)
        roles = records.get("roles", {})
        if role_name not in roles:
            from torchx.specs import closest

            raise SpecsError("role", role_name, closest(str(role_name), list(roles)))
        count = int(roles[role_name]["num_replicas"])
        if not isinstance(k, int) or not 0 <= k < count:
            raise SpecsError(
                "replica", k, f"role {role_name!r} has replicas 0..{count - 1}; pick one of them"
            )
        replica_dir = os.path.join(app_dir, role_name, str(k))
        from torchx.schedulers._local_logs import timed_lines

        ended = (lambda: self._ended(app_id)) if request.follow else None
        return timed_lines(replica_dir, request.stream, ended)

    def _ended(self, app_id: str) -> bool:
        desc = self.describe(app_id)
        return desc is None or is_terminal(desc.state)

    # -- control ----------------------------------------------------------------------

    def _cancel_existing(self, app_id: str) -> None:
        """Stop the app's replicas and their children; returns once they are gone.

        Raises AppStateError when the app's state cannot be read (naming the file), and
        SchedulerError when processes of the app could not be stopped.
        """
        app_dir = self._app_dir(app_id)
        if app_dir is None:
            raise SpecsError(
                "app id", app_id, f"no such {self.backend} app; `list` shows the known ones"
            )
        request, state = self._records.current_state(app_id, app_dir)
        if is_terminal(state_of(state.get("state", "UNKNOWN"))):
            return
        marker = os.path.join(app_dir, META_DIR, CANCEL_FILE)
        with open(marker, "w"):
            pass
        _, state = self._records.read(app_dir)
        pid = state.get("supervisor_pid")
        if pid is not None and self._records.supervisor_alive(app_id, state):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), 15)
        grace = float(request.get("cancel_grace_s", 5.0))
        # the supervisor also looks for the marker once per housekeeping interval
        desc = self.wait(app_id, timeout=grace + 15.0 + HOUSEKEEPING_INTERVAL)
        if desc is None or is_terminal(desc.state):
            return  # ended, or its directory was deleted (its supervisor then stops it)
        # The supervisor is alive but did not stop the app: stop everything ourselves.
        _, state = self._records.read(app_dir)
        if pid is not None and self._records.supervisor_alive(app_id, state):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), 9)
        killed = kill_recorded_groups(state)
        raise SchedulerError(
            self.backend,
            f"app {app_id!r}: its supervisor (pid {pid}) did not stop it within "
            f"{grace + 15.0:.0f}s; torchx killed the supervisor and the process groups "
            f"{killed}",
            f"see {os.path.join(app_dir, META_DIR, SUPERVISOR_LOG)}",
        )

    def requeue(self, app_id: str, timeout: float | None = None) -> DescribeAppResponse:
        """Stand in for a preemption: warn the app's replicas (SIGTERM), let them
        checkpoint and exit within ``cancel_grace_seconds``, then start them again under the
        same app id. Returns once the new attempt has started (or ``timeout`` passed)."""
        from torchx.schedulers._local_requeue_request import ask_requeue

        return ask_requeue(self, self._records, app_id, timeout)

    def close(self) -> None:
        """Reap the supervisors that already ended. Apps keep running (0.7 killed them
        here): they are detached so that any process can follow them by handle; cancel
        what a program started, in a ``finally``, to stop it."""
        for app_id, proc in list(self._supervisors.items()):
            if proc.poll() is not None:
                del self._supervisors[app_id]


def create_scheduler(
    session_name: str,
    cache_size: int = 100,
    extra_paths: list[str] | None = None,
    image_provider_class: Callable[[Mapping[str, CfgVal]], ImageProvider] = CWDImageProvider,
    *,
    state_dir: str | os.PathLike[str] | None = None,
    **params: Any,
) -> LocalScheduler:
    """The local_cwd factory, with 0.7's parameters in 0.7's order (``state_dir`` is by
    name only); any other parameter is refused."""
    return _factory(BACKEND, session_name, cache_size, extra_paths, image_provider_class,
                    state_dir, params)  # fmt: skip


def create_dir_scheduler(
    session_name: str,
    cache_size: int = 100,
    extra_paths: list[str] | None = None,
    *,
    state_dir: str | os.PathLike[str] | None = None,
    **params: Any,
) -> LocalScheduler:
    """The local_dir factory: each role's image must be a directory, which it runs in."""
    return _factory(DIR_BACKEND, session_name, cache_size, extra_paths,
                    LocalDirectoryImageProvider, state_dir, params)  # fmt: skip


def _factory(
    backend: str,
    session_name: str,
    cache_size: int,
    extra_paths: list[str] | None,
    image_provider_class: Callable[[Mapping[str, CfgVal]], ImageProvider],
    state_dir: str | os.PathLike[str] | None,
    params: Mapping[str, Any],
) -> LocalScheduler:
    takes = ("cache_size", "extra_paths", "state_dir")
    # Checked here, where a factory's caller gave them: used later, at submit, a wrong one
    # would fail far from its cause.
    if not callable(image_provider_class):
        raise SpecsError(
            "image_provider_class",
            image_provider_class,
            "give a class (or callable) taking the run options and returning an ImageProvider, "
            "e.g. LocalDirectoryImageProvider",
        )
    if isinstance(extra_paths, str):
        raise SpecsError(
            "extra_paths", extra_paths, f"give a list of directories: [{extra_paths!r}]"
        )
    check_params(backend, params, (*takes, "image_provider_class") if backend == BACKEND else takes)
    return LocalScheduler(
        session_name,
        image_provider_class=image_provider_class,
        cache_size=cache_size,
        extra_paths=extra_paths,
        state_dir=state_dir,
        backend=backend,
    )
