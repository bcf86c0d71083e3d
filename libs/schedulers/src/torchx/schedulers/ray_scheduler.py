"""ray: runs an app as a Ray job through the job submission API.

``schedule`` submits one job to a cluster's dashboard (``JobSubmissionClient``); this package
must be installed on the cluster, since the job's entrypoint is one of its modules:

- ``direct`` path, for apps of one role with one replica (an echo, single-node training):
  ``_ray_direct`` runs the replica's command as its own subprocess and imports no Ray at
  all. Ray places that entrypoint process itself with the replica's resources
  (``entrypoint_num_cpus`` / ``entrypoint_num_gpus`` / ``entrypoint_memory``), so the job
  costs what a bare ``submit_job`` costs.
- ``actors`` path, for everything else: ``_ray_driver`` places one actor per replica in a
  placement group sized to the roles' resources and runs each replica's command in its actor.

Either prints every replica's output and state as structured lines. ``describe`` and
``log_iter`` read those lines back from the job's log, so they work from any process that
can reach the dashboard, and ``log_iter`` gives one replica's output, not the merged stream.

An app id is ``HOST:PORT-SUBMISSION_ID``: it carries the dashboard address, so a handle
alone (``ray://session/127.0.0.1:8265-echo-1a2b3c4d``) is enough to find the app again.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, TypedDict

from torchx.schedulers._api import (
    DescribeAppResponse,
    ListAppResponse,
    LogRequest,
    Scheduler,
    in_window,
)
from torchx.schedulers._errors import SchedulerError, check_params, require
from torchx.schedulers._ray_address import (
    check_address,
    dashboard_url,
    job_client,
    needs_lookup_at_dry_run,
    request_address,
)
from torchx.schedulers._ray_direct import CONFIG_ENV
from torchx.schedulers._ray_logs import log_lines
from torchx.schedulers._ray_request import (
    ACTORS,
    DIRECT,
    ENTRYPOINTS,
    METADATA_KEY,
    PLACEMENT_STRATEGIES,
    SWEEP_METADATA_KEY,
    RayJob,
    build_job,
    format_job,
    http_url,
    strip_scheme,
)
from torchx.schedulers._ray_requeue import resubmit_kwargs
from torchx.schedulers._ray_status import (
    JOB_STATES,
    ROLES_METADATA_KEY,
    JobRecord,
    describe_response,
    events,
    latest_state,
    recorded_roles,
)
from torchx.schedulers._replica_env import TORCHX_RANK0_HOST
from torchx.specs import AppDef, AppDryRunInfo, AppState, CfgVal, Role, SpecsError, runopts
from torchx.workspace.dir_workspace import TmpDirWorkspaceMixin, copy_workspace

__all__ = [
    "ACTORS",
    "CONFIG_ENV",
    "DIRECT",
    "NONE",
    "TORCHX_RANK0_HOST",
    "RayJob",
    "RayOpts",
    "RayScheduler",
    "create_scheduler",
    "has_ray",
    "serialize",
]

BACKEND = "ray"
ADDRESS_ENV = "RAY_ADDRESS"
# How often ``wait`` and ``requeue`` ask the dashboard again.
POLL_INTERVAL_S = 0.1
_APP_ID = re.compile(r"^(?P<address>[A-Za-z0-9.\-\[\]:]+:\d+)-(?P<sid>[A-Za-z0-9][A-Za-z0-9_.-]*)$")


class RayOpts(TypedDict, total=False):
    """The ray run options, typed."""

    address: str
    working_dir: str
    requirements: str
    pip: list[str]
    placement_strategy: str


class RayScheduler(TmpDirWorkspaceMixin, Scheduler[RayJob]):
    """Submits apps as Ray jobs; see the module docstring.

    A workspace goes to the cluster as the job's ``working_dir``. ``torchx run``, the
    Runner and ``submit(app, cfg, workspace)`` put it in that run option as it is
    (``with_workspace``); ``schedule`` uploads a copy without what ``.torchxignore`` lists,
    made in a temporary directory removed once Ray has it. pytorch/torchx 0.7's own flow
    works too: ``build_workspace_and_update_role`` (a :class:`TmpDirWorkspaceMixin`) copies
    the workspace into a temporary directory and makes it the role's image, and a dry run
    without a ``working_dir`` option ships the first role's image as the working directory
    when it is such a copy or an absolute path of a local directory, as 0.7 did (a relative
    image such as ``python`` stays an image name even where ``./python/`` exists).
    """

    def __init__(
        self, session_name: str = "torchx", ray_client: Any = None, *, address: str | None = None
    ) -> None:
        """``ray_client``, a ready ``ray.job_submission.JobSubmissionClient`` (pytorch/torchx
        0.7's parameter), serves every call to its cluster, whose address becomes the
        default; ``address`` names a cluster without one."""
        super().__init__(BACKEND, session_name)
        self._clients: dict[str, Any] = {}
        self._urls: dict[str, str] = {}  # address as given -> its dashboard's URL
        # Workspace copies build_workspace_and_update_role made, removed once uploaded,
        # and those removed: copy -> the app id whose submission removed it.
        self._built: set[str] = set()
        self._removed: dict[str, str] = {}
        if ray_client is not None:
            if address is not None:
                raise SpecsError(
                    "ray scheduler parameter 'address'",
                    address,
                    "give ray_client or address, not both (the client names its cluster)",
                )
            address = self._adopt(ray_client)
        self.address = address

    def _adopt(self, client: Any) -> str:
        """Use ``client`` for its cluster, under each form of address a handle carries."""
        get_address = getattr(client, "get_address", None)
        if isinstance(client, str) or not callable(get_address):
            raise SpecsError(
                "ray scheduler parameter 'ray_client'",
                client,
                "pass a ray.job_submission.JobSubmissionClient, or the cluster as address=...",
            )
        url = check_address(str(get_address()))
        for key in (url, strip_scheme(url)):
            self._clients[key] = client
            self._urls[key] = url
        return url

    def _client(self, address: str) -> Any:
        """The job client of the cluster at ``address`` (any form of ``check_address``)."""
        client = self._clients.get(address)
        if client is None:
            # Without Ray installed, naming the extra helps more than probing the address.
            require("ray.job_submission", scheduler=BACKEND, extra="ray")
            self._urls[address] = dashboard_url(address)
            client = job_client(self._urls[address])
            self._clients[address] = client
        return client

    # -- submission -------------------------------------------------------------------

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add(
            "address",
            str,
            "the Ray cluster, as Ray's CLI reads it: http://HOST:PORT (its dashboard), "
            f"HOST:PORT (dashboard or GCS), ray://HOST:PORT or auto (default: ${ADDRESS_ENV})",
            default=self.address,
        )
        opts.add(
            "dashboard_address",
            str,
            "pytorch/torchx 0.7's name for address; wins over it when given",
        )
        opts.add(
            "cluster_config_file",
            str,
            "a Ray cluster config (ray up's YAML): the job goes to its head node's dashboard",
        )
        opts.add("cluster_name", str, "the cluster name, over the one cluster_config_file gives")
        opts.add(
            "working_dir",
            str,
            "a local directory shipped to the cluster; the replicas run in it",
        )
        opts.add("requirements", str, "a requirements.txt whose packages the job's env installs")
        opts.add("pip", list, "packages the job's runtime env installs with pip (a;b;c)")
        opts.add(
            "placement_strategy",
            str,
            f"how the replicas' bundles are placed: one of {', '.join(PLACEMENT_STRATEGIES)}",
            default="PACK",
        )
        return opts

    def with_workspace(
        self, app: AppDef, cfg: Mapping[str, CfgVal], workspace: str
    ) -> tuple[AppDef, dict[str, CfgVal]]:
        return app, {**cfg, "working_dir": self._workspace_path(workspace)}

    def build_workspace_and_update_role(
        self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]
    ) -> None:
        """pytorch/torchx 0.7's workspace step: ``role.image`` becomes a new temporary
        directory holding what ``.torchxignore`` keeps of ``workspace``; a dry run then ships
        it as the working directory, and ``schedule`` removes the copy a job shipped once
        Ray has it (a copy no job shipped, or a dry run never scheduled, is left, as in
        0.7), so each shipped copy serves one submission. ``torchx run`` and the Runner do
        not call this: they pass the workspace as the ``working_dir`` run option."""
        super().build_workspace_and_update_role(role, workspace, cfg)
        path = os.path.abspath(role.image)
        self._built.add(path)
        self._removed.pop(path, None)  # a fresh copy, whatever an old one at this path did

    def default_workspace(self, cfg: Mapping[str, CfgVal]) -> str | None:
        """The current directory, shipped as ``working_dir`` (pytorch/torchx 0.7's CLI
        default), unless the run options name a ``working_dir`` of their own."""
        return None if cfg.get("working_dir") is not None else os.getcwd()

    def _given_address(self, cfg: Mapping[str, CfgVal]) -> str | None:
        cluster_file = cfg.get("cluster_config_file")
        if cluster_file:
            path = os.path.expanduser(str(cluster_file))
            if not os.path.isfile(path):
                raise SpecsError(
                    "run option 'cluster_config_file'",
                    cluster_file,
                    "give the path of an existing Ray cluster config (ray up's YAML)",
                )
            from ray.autoscaler import sdk  # the Ray client, as for every Ray request

            cluster: str | dict[str, Any] = path
            if cfg.get("cluster_name"):
                import yaml  # Ray's own dependency

                with open(path) as f:
                    cluster = {**yaml.safe_load(f), "cluster_name": str(cfg["cluster_name"])}
            head = sdk.get_head_node_ip(cluster)
            return check_address(f"{head}:8265")
        given = (
            cfg.get("dashboard_address")
            or cfg.get("address")
            or self.address
            or os.environ.get(ADDRESS_ENV)
        )
        return check_address(str(given)) if given else None

    def _resolve_address(self, cfg: Mapping[str, CfgVal]) -> str:
        """The cluster's address ``cfg`` (or $RAY_ADDRESS) gives, checked; ``_client`` finds
        its dashboard."""
        given = self._given_address(cfg)
        if not given:
            raise SpecsError(
                "run option 'address'",
                None,
                f"give the Ray cluster's address (-cfg address=HOST:PORT) or set ${ADDRESS_ENV}",
            )
        return given

    def _dryrun_address(self, cfg: Mapping[str, CfgVal]) -> str:
        """The dashboard a dry run names; "" when no address is given (a dry run needs no
        cluster; ``schedule`` then says what is missing)."""
        given = self._given_address(cfg)
        return request_address(given) if given else ""

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[RayJob]:
        image = app.roles[0].image if app.roles else ""
        if cfg.get("working_dir") is None and self._image_is_working_dir(image):
            # 0.7's working directory: the first role's image, a local directory (what
            # build_workspace_and_update_role makes); the run option wins over it.
            cfg = {**cfg, "working_dir": image}
        return AppDryRunInfo(build_job(app, cfg, self._dryrun_address(cfg)), format_job)

    def _image_is_working_dir(self, image: str) -> bool:
        """Whether a role image is shipped as the working directory, as in 0.7: a copy
        ``build_workspace_and_update_role`` made, or an absolute path of a local directory.
        A relative name (``python``) is an image name even where ``./python/`` exists."""
        if not image:
            return False
        path = os.path.abspath(image)
        self._check_not_removed("role image", path)
        return (path in self._built or os.path.isabs(image)) and os.path.isdir(path)

    def _check_not_removed(self, field: str, path: str) -> None:
        """Refuse a copy ``schedule`` removed, naming the job it went with."""
        app_id = self._removed.get(path)
        if app_id is not None:
            raise SpecsError(
                field,
                path,
                "this temporary copy of the workspace was removed after job "
                f"{app_id} was submitted with it; call build_workspace_and_update_role "
                "again for a new copy, then dry-run again",
            )

    def schedule(self, dryrun_info: AppDryRunInfo[RayJob]) -> str:
        job = dryrun_info.request
        if not job.address:
            self._resolve_address({})  # says how to give the address
        if needs_lookup_at_dry_run(job.address):
            raise SchedulerError(
                BACKEND,
                f"the Ray cluster at {job.address} did not answer when the job was dry-run",
                "start the cluster, then run (or dry-run) again",
            )
        client = self._client(job.address)
        kwargs = job.submit_kwargs()
        working_dir = job.runtime_env.get("working_dir")
        if working_dir is not None:
            self._check_not_removed("working_dir", str(working_dir))
        built = working_dir is not None and str(working_dir) in self._built
        with tempfile.TemporaryDirectory(prefix="torchx_ray_") as upload:
            if working_dir is not None and not built:
                # What Ray uploads is a copy without what .torchxignore lists: the same
                # files every scheduler's workspace holds (a built one is such a copy).
                copy_workspace(str(working_dir), upload)
                kwargs["runtime_env"] = {**job.runtime_env, "working_dir": upload}
            try:
                client.submit_job(**kwargs)
            except (RuntimeError, ConnectionError) as e:
                raise SchedulerError(
                    BACKEND, f"the cluster at {job.address} refused the job: {e}"
                ) from None
        # Kept until now so that a refused job can be scheduled again.
        if built:
            self._remove_shipped_copy(str(working_dir), job.app_id)
        return job.app_id

    def _remove_shipped_copy(self, path: str, app_id: str) -> None:
        """Remove the workspace copy a submitted job shipped as its working directory. Only
        that one: a copy the job did not ship (another role's image, or the first role's
        when a ``working_dir`` option won) may be what another app's dry run ships."""
        shutil.rmtree(path, ignore_errors=True)
        self._built.discard(path)
        self._removed[path] = app_id

    # -- finding apps -----------------------------------------------------------------

    def _split(self, app_id: str) -> tuple[str, str]:
        m = _APP_ID.match(app_id) if isinstance(app_id, str) else None
        if m is None:
            raise SpecsError(
                "app id",
                app_id,
                "expected HOST:PORT-SUBMISSION_ID as printed by run "
                "(e.g. 127.0.0.1:8265-echo-1a2b3c4d)",
            )
        return m["address"], m["sid"]

    def _info(self, address: str, sid: str) -> Any | None:
        try:
            return self._client(address).get_job_info(sid)
        except RuntimeError as e:
            if "does not exist" in str(e) or "404" in str(e):
                return None
            raise

    def _record(self, address: str, sid: str, info: Any) -> JobRecord:
        """The driver's last report on job ``sid`` (``info``: Ray's details of it)."""
        if ROLES_METADATA_KEY not in (info.metadata or {}):
            return JobRecord()  # no torchx driver runs it: nothing of ours in its log
        # Fetched whole: a status is asked for often, and the stream is slower (_ray_logs).
        return latest_state(log_lines(self._client(address), sid, stream=False))

    # -- inspection -------------------------------------------------------------------

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        address, sid = self._split(app_id)
        info = self._info(address, sid)
        if info is None:
            return None
        ui_url = self._urls.get(address, http_url(address))
        return describe_response(app_id, info, self._record(address, sid, info), ui_url)

    def wait(self, app_id: str, timeout: float | None = None) -> DescribeAppResponse | None:
        """Poll the job's status (cheap) until it ends; then describe it once."""
        address, sid = self._split(app_id)
        deadline = None if timeout is None else time.monotonic() + timeout
        client = self._client(address)
        while True:
            try:
                status = client.get_job_status(sid)
            except RuntimeError:
                return self.describe(app_id)
            if status.is_terminal():
                return self.describe(app_id)
            if deadline is not None and time.monotonic() >= deadline:
                return self.describe(app_id)
            time.sleep(POLL_INTERVAL_S)

    def wait_until_finish(self, app_id: str, timeout: int = 30) -> None:
        """pytorch/torchx 0.7's form of ``wait``: up to ``timeout`` seconds, no result."""
        self.wait(app_id, timeout=timeout)

    def list(self, cfg: Mapping[str, CfgVal] | None = None) -> list[ListAppResponse]:
        """The torchx jobs of the cluster ``cfg``'s address (or $RAY_ADDRESS) names."""
        address = self._resolve_address(cfg or {})
        out = []
        for job in self._client(address).list_jobs():
            meta = job.metadata or {}
            if METADATA_KEY not in meta or not job.submission_id:
                continue
            started, ended = job.start_time, job.end_time
            out.append(
                ListAppResponse(
                    app_id=f"{strip_scheme(address)}-{job.submission_id}",
                    state=JOB_STATES.get(str(job.status.value), AppState.UNKNOWN),
                    name=meta[METADATA_KEY],
                    sweep=str(meta.get(SWEEP_METADATA_KEY, "")),
                    submitted_at=datetime.fromtimestamp(started / 1000) if started else None,
                    ended_at=datetime.fromtimestamp(ended / 1000) if ended else None,
                )
            )
        out.sort(key=lambda r: r.submitted_at or datetime.min)
        return out

    def _replica_log(self, request: LogRequest) -> Iterable[str]:
        app_id, role_name, k = request.app_id, request.role_name, request.k
        address, sid = self._split(app_id)
        info = self._info(address, sid)
        if info is None:
            raise SpecsError(
                "app id", app_id, f"no such {BACKEND} app; `list` shows the known ones"
            )
        counts = recorded_roles(info.metadata)
        if role_name not in counts:
            from torchx.specs import closest

            raise SpecsError("role", role_name, closest(str(role_name), list(counts)))
        if not isinstance(k, int) or not 0 <= k < counts[role_name]:
            raise SpecsError(
                "replica",
                k,
                f"role {role_name!r} has replicas 0..{counts[role_name] - 1}; pick one of them",
            )
        # Streamed when followed (each line read once, however long the job runs); else
        # the log as it is now, in one fetch, as 0.7 read it (the stream is far slower).
        lines = log_lines(self._client(address), sid, stream=request.follow)
        if ROLES_METADATA_KEY not in (info.metadata or {}):
            # A job torchx did not submit (one of pytorch/torchx 0.7's): its lines carry no
            # replica or time, so they are given as they are, as 0.7 gave them.
            return lines
        wanted = {"stdout": {"o"}, "stderr": {"e"}, "combined": {"o", "e"}}[request.stream.value]
        timed = (
            (float(e["t"]), str(e["l"]))
            for e in events(lines, "log")
            if e["r"] == role_name and e["k"] == k and e["s"] in wanted
        )
        return in_window(timed, request.since, request.until)

    # -- control ----------------------------------------------------------------------

    def _cancel_existing(self, app_id: str) -> None:
        """Stop the app's job; returns once Ray reports it ended.

        A direct-path app still waiting for its resources is the exception: Ray ends it only
        once it can place it, so this returns at once.
        """
        address, sid = self._split(app_id)
        info = self._info(address, sid)
        if info is None or info.status.is_terminal():
            return
        self._client(address).stop_job(sid)
        if str(info.status.value) == "PENDING" and str(info.entrypoint).startswith(
            ENTRYPOINTS[DIRECT]
        ):
            # Ray holds the stop of a job whose entrypoint waits for its resources until it
            # places it (or its start timeout fails the job): nothing to wait for now.
            return
        self.wait(app_id, timeout=30.0)

    def requeue(self, app_id: str) -> DescribeAppResponse | None:
        """Stand in for a preemption: the job is stopped (the replicas get SIGTERM and a
        moment to checkpoint) and submitted again under the same submission id, its next
        ``attempt()`` one more. None for an
        unknown app; an ended app is refused (run it again instead)."""
        address, sid = self._split(app_id)
        info = self._info(address, sid)
        if info is None:
            return None
        if info.status.is_terminal():
            raise SchedulerError(
                BACKEND,
                f"app {app_id} has already ended ({info.status.value}); only a running app "
                "can be requeued",
                "run it again; the app resumes if it reads its checkpoint",
            )
        self._cancel_existing(app_id)
        client = self._client(address)
        ended = self._info(address, sid)
        if ended is None or not ended.status.is_terminal():
            raise SchedulerError(
                BACKEND,
                f"app {app_id} did not stop within 30 s, so it was not submitted again",
                "wait for it to end, then run it again",
            )
        kwargs = resubmit_kwargs(ended, sid)
        deadline = time.monotonic() + REQUEUE_START_TIMEOUT_S
        while True:
            # Ray's monitor of an ended job (it looks every second) ends by killing the
            # supervisor actor named after the submission id, whichever attempt's it is by
            # then: the next attempt is submitted once that monitor is done. Should it not
            # be, the attempt fails before it ran and is submitted again.
            time.sleep(_MONITOR_DONE_S)
            client.delete_job(sid)
            client.submit_job(**kwargs)
            while (status := client.get_job_status(sid)).value == "PENDING":
                if time.monotonic() > deadline:
                    return self.describe(app_id)  # waiting for resources, as submitted
                time.sleep(POLL_INTERVAL_S)
            info = self._info(address, sid)
            stale = info is not None and _STALE_SUPERVISOR in str(info.message or "")
            if not (status.value == "FAILED" and stale) or time.monotonic() > deadline:
                return self.describe(app_id)

    def close(self) -> None:
        self._clients.clear()


# Seconds after a job ended by which Ray's monitor of it has finished (it looks every
# second, and its last act is to kill the job's supervisor actor).
_MONITOR_DONE_S = 3.0
# How long a requeue waits for the new attempt to leave PENDING.
REQUEUE_START_TIMEOUT_S = 60.0
# In Ray's message for a job whose supervisor actor failed to start or died before it
# ran ("Failed to start supervisor actor ...", "Job supervisor actor died ...").
_STALE_SUPERVISOR = "supervisor actor"


def create_scheduler(
    session_name: str, ray_client: Any = None, *, address: str | None = None, **params: Any
) -> RayScheduler:
    """The ray factory: ``ray_client`` (a ``JobSubmissionClient``, 0.7's parameter) or
    ``address`` (the cluster, HOST:PORT) names the cluster."""
    check_params(BACKEND, params, ("ray_client", "address"))
    return RayScheduler(session_name, ray_client, address=address)


def has_ray() -> bool:
    """Whether Ray's job submission client can be imported here (the ``ray`` extra)."""
    import importlib.util

    try:
        return importlib.util.find_spec("ray.job_submission") is not None
    except ModuleNotFoundError:
        return False


# pytorch/torchx 0.7's module-level names, for code that imports them from here.
NONE = "<NONE>"


def serialize(actors: list[Any], dirpath: str, output_filename: str = "actors.json") -> None:
    """Write ``actors`` (``torchx.schedulers.ray.ray_common.RayActor``) to
    ``dirpath/output_filename`` as the JSON ``ray_driver.load_actor_json`` reads."""
    from torchx.schedulers.ray.ray_driver import to_json

    with open(os.path.join(dirpath, output_filename), "w", encoding="utf-8") as f:
        f.write(to_json(actors))
