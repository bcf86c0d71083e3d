"""slurm: runs an app as one sbatch job through Slurm's own commands.

One role is one job; several roles are one heterogeneous job whose components run with
``srun --het-group``. ``describe`` asks ``sacct`` when accounting is on and
``scontrol show job`` otherwise (or when sacct does not know the job yet). Replica output
is written next to the job (its ``WorkDir``), which Slurm reports, so ``log_iter`` finds
it from any directory and any process. The commands run with the caller's environment
(``SLURM_CONF`` and friends).

The parts: ``_slurm_script`` writes the sbatch script, ``_slurm_preemption`` its time-limit
and requeue handling, ``_slurm_commands`` runs Slurm's commands and words their failures,
``_slurm_parse`` reads their answers and ``_slurm_status`` each replica's state from them.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

from torchx.schedulers._api import (
    DescribeAppResponse,
    ListAppResponse,
    LogRequest,
    Scheduler,
    Stream,
)
from torchx.schedulers._bounded_lines import FileLines
from torchx.schedulers._errors import check_params
from torchx.schedulers._sbatch_workdir import job_workdir
from torchx.schedulers._slurm_commands import (
    BACKEND,
    JOB_ID,
    SlurmError,
    check_job_id,
    refused_for_size,
    run,
    slurm_message,
    submit_error,
)
from torchx.schedulers._slurm_parse import _STATES as _SLURM_STATES
from torchx.schedulers._slurm_parse import (
    SACCT_FIELDS,
    Component,
    SlurmOutputError,
    exit_reason,
    job_app_state,
    parse_sacct,
    parse_scontrol,
    roles_from_comment,
    slurm_time,
    state_word,
    sweep_from_comment,
)
from torchx.schedulers._slurm_preemption import (
    DEFAULT_MAX_TIME_REQUEUES,
    DEFAULT_WARNING_S,
    TIMEOUT_REASON_PREFIX,
    clear_requests,
    read_requeues,
)
from torchx.schedulers._slurm_script import (
    _JOB_WIDE,
    _PER_COMPONENT,
    check_roles,
    log_name,
    make_script,
    replica_exports,
    resource_options,
)
from torchx.schedulers._slurm_status import pending_reason, refused, replica_statuses
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    Role,
    RoleStatus,
    SpecsError,
    is_terminal,
    runopts,
)
from torchx.workspace.dir_workspace import DirWorkspaceMixin, copy_workspace

TAIL_INTERVAL = 0.2
# How far back ``list`` asks accounting for ended jobs.
LIST_DAYS = 7
# Slurm's words for a job it ended itself: said as they are, not as the exit code they cause.
_ENDED_BY_SLURM = ("TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "DEADLINE", "BOOT_FAIL")
# sbatch's spellings of run options, accepted as aliases.
_ALIASES = {"mail-user": "mail_user", "mail-type": "mail_type"}


class SlurmOpts(TypedDict, total=False):
    """The slurm run options, typed (``mail-user``/``mail-type`` are aliases)."""

    partition: str
    time: str
    comment: str
    constraint: str
    mail_user: str
    mail_type: str
    account: str
    qos: str
    job_dir: str
    exclusive: bool
    sbatch_args: list[str]
    workspace: str
    preempt_warning_seconds: int
    max_time_requeues: int


@dataclass
class SlurmReplicaRequest:
    """One role as a component of the job: its sbatch resource options, and what each of
    its replicas (tasks of one ``srun``) runs with which environment.

    Values may hold torchx's macros; the script turns them into shell expansions.
    """

    name: str
    entrypoint: str
    args: list[str]
    env: dict[str, str]
    num_replicas: int = 1
    sbatch_opts: list[str] = field(default_factory=list)

    @classmethod
    def from_role(
        cls, name: str, role: Role, cfg: Mapping[str, CfgVal], nomem: bool = False
    ) -> SlurmReplicaRequest:
        """``nomem`` leaves out ``--mem``, for partitions that do not schedule memory."""
        opts = resource_options(role)
        if nomem:
            opts = [o for o in opts if not o.startswith("--mem=")]
        return cls(
            name=name,
            entrypoint=role.entrypoint,
            args=list(role.args),
            env=replica_exports(role),
            num_replicas=role.num_replicas,
            sbatch_opts=opts,
        )

    def materialize(self) -> list[str]:
        """The sbatch options of this component."""
        return list(self.sbatch_opts)


@dataclass
class SlurmBatchRequest:
    """What ``schedule`` runs: ``cmd`` with the script on stdin, in ``job_dir``."""

    cmd: list[str]
    script: str
    job_dir: str | None = None
    workspace: str | None = None
    roles: list[str] = field(default_factory=list)
    replicas: dict[str, SlurmReplicaRequest] = field(default_factory=dict)
    partition: str | None = None

    def materialize(self) -> str:
        """The sbatch script, as submitted on sbatch's stdin."""
        return self.script

    def __str__(self) -> str:
        where = f"# job_dir: {self.job_dir}\n" if self.job_dir else ""
        ws = f"# workspace copied into job_dir: {self.workspace}\n" if self.workspace else ""
        return f"# {shlex.join(self.cmd)}\n{where}{ws}{self.script}"


class SlurmScheduler(DirWorkspaceMixin, Scheduler[SlurmBatchRequest]):
    """Submits apps with sbatch; see the module docstring.

    A workspace (``--workspace``) is copied into ``job_dir`` when the job is submitted,
    without what its ``.torchxignore`` lists; the torchx CLI copies the current directory
    by default, as pytorch/torchx does.

    Slurm keeps each replica's stdout and stderr in two files; the log's default stream,
    combined as elsewhere (so that a failed job's traceback shows), reads both: see
    ``_replica_log``.
    """

    def __init__(self, session_name: str = "torchx", use_sacct: bool | None = None) -> None:
        """``use_sacct``: None asks sacct when accounting answers, False never does."""
        super().__init__(BACKEND, session_name)
        self._use_sacct = use_sacct

    # -- submission -------------------------------------------------------------------

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("partition", str, "partition to run in (default: the cluster's default)")
        opts.add("time", str, "time limit, e.g. 30 or 1:00:00 (sbatch --time)")
        opts.add("comment", str, "text stored with the job (after torchx's own marker)")
        opts.add("constraint", str, "node features required (sbatch --constraint)")
        opts.add("mail_user", str, "who gets mail about the job")
        opts.add("mail_type", str, "which events send mail, e.g. END,FAIL")
        for alias in _ALIASES:
            opts.add(alias, str, f"the same as {_ALIASES[alias]} (sbatch's spelling)")
        opts.add("account", str, "account to charge")
        opts.add("qos", str, "quality of service")
        opts.add(
            "job_dir",
            str,
            "directory the job runs in and writes its logs to (default: the current one)",
        )
        opts.add("exclusive", bool, "do not share nodes with other jobs", default=False)
        opts.add("sbatch_args", list, "more sbatch flags, e.g. --nice=10;--requeue")
        opts.add(
            "preempt_warning_seconds",
            int,
            "seconds before the time limit at which the app is warned (SIGUSR1 to the "
            "script, SIGTERM to the app) to checkpoint and ask for a requeue; only for an "
            "app that handles SIGTERM (torchx.runtime.preemption), any other is stopped that "
            "early (Slurm may signal up to 60 s earlier still). 0: no warning, the app runs "
            "up to its limit, as in torchx 0.7",
            default=DEFAULT_WARNING_S,
        )
        opts.add(
            "max_time_requeues",
            int,
            "how often a job that reaches its time limit is requeued before it ends FAILED "
            "(preemptions are not counted)",
            default=DEFAULT_MAX_TIME_REQUEUES,
        )
        opts.add(
            "workspace",
            str,
            "directory copied into job_dir before the job starts (set by --workspace)",
        )
        return opts

    def workspace_opts(self) -> runopts:
        return runopts()  # job_dir and workspace are among the scheduler's own options

    def with_workspace(
        self, app: AppDef, cfg: Mapping[str, CfgVal], workspace: str
    ) -> tuple[AppDef, dict[str, CfgVal]]:
        # Copied at submit rather than now, so that a dryrun writes nothing and a refused
        # job leaves nothing behind.
        return app, {**cfg, "workspace": self._workspace_path(workspace)}

    def default_workspace(self, cfg: Mapping[str, CfgVal]) -> str | None:
        """The current directory, where a ``job_dir`` is new or empty: the job then finds
        the files next to the command that launched it, as with pytorch/torchx."""
        job_dir = cfg.get("job_dir")
        if not job_dir:
            return None
        path = os.path.abspath(os.path.expanduser(str(job_dir)))
        if os.path.isdir(path) and os.listdir(path):
            return None  # a job_dir that already holds files is used as it is
        return os.getcwd()

    def _submit_dryrun(
        self, app: AppDef, cfg: dict[str, CfgVal]
    ) -> AppDryRunInfo[SlurmBatchRequest]:
        check_roles(app)
        for alias, name in _ALIASES.items():
            value = cfg.pop(alias, None)
            if value is not None and cfg.get(name) is None:
                cfg[name] = value
        job_dir = cfg.get("job_dir")
        workspace = cfg.get("workspace")
        if workspace and not job_dir:
            raise SpecsError(
                "run option 'job_dir'",
                None,
                "a workspace is copied into job_dir; set job_dir to a directory the nodes see",
            )
        if workspace and not os.path.isdir(str(workspace)):
            raise SpecsError("run option 'workspace'", workspace, "give an existing directory")
        cmd = ["sbatch", "--parsable"]
        if job_dir:
            cmd.append(f"--chdir={os.path.abspath(str(job_dir))}")
        extra = cfg.get("sbatch_args") or []
        assert isinstance(extra, list)
        cmd += extra
        request = SlurmBatchRequest(
            cmd=cmd,
            script=make_script(app, cfg, job_name=app.name),
            job_dir=os.path.abspath(str(job_dir)) if job_dir else None,
            workspace=str(workspace) if workspace else None,
            roles=[r.name for r in app.roles],
            replicas={r.name: SlurmReplicaRequest.from_role(r.name, r, cfg) for r in app.roles},
            partition=str(cfg["partition"]) if cfg.get("partition") else None,
        )
        return AppDryRunInfo(request, str)

    def schedule(self, dryrun_info: AppDryRunInfo[SlurmBatchRequest]) -> str:
        req = dryrun_info.request
        if len(req.replicas) > 1:
            self._check_fits(req)
        created: str | None = None
        if req.job_dir:
            if req.workspace:
                if os.path.isdir(req.job_dir) and os.listdir(req.job_dir):
                    raise SpecsError(
                        "run option 'job_dir'",
                        req.job_dir,
                        "it already holds files; give a new or empty directory for a workspace",
                    )
                created = _make_job_dir(req.job_dir)
                try:
                    copy_workspace(req.workspace, req.job_dir)
                except BaseException:
                    _empty(req.job_dir, remove=created is not None)
                    raise
            else:
                created = _make_job_dir(req.job_dir)
        proc = run([*req.cmd], stdin=req.script)
        if proc.returncode != 0:
            if created is not None:
                # Nothing of a refused job is left behind.
                shutil.rmtree(created, ignore_errors=True)
            elif req.workspace and req.job_dir:
                _empty(req.job_dir, remove=False)
            # A one-role job larger than its partition is refused in words (processors,
            # node count) that do not say so; its size against the partition's does. A
            # heterogeneous job's was checked above.
            if len(req.replicas) == 1 and refused_for_size(proc):
                self._check_fits(req, refused=True)
            raise submit_error(proc, dryrun_info.cfg)
        job_id = proc.stdout.strip().split(";")[0]
        if not JOB_ID.match(job_id):
            raise SlurmOutputError("sbatch --parsable", proc.stdout.strip(), "not a job id")
        clear_requests(job_workdir(req.cmd), job_id)
        return job_id

    def _check_fits(self, req: SlurmBatchRequest, refused: bool = False) -> None:
        """Refuse a job that needs more nodes at once (one per replica) than its partition
        has, quoting the partition's size.

        sbatch takes a heterogeneous such job (each component fits alone) and it pends
        forever with ``Reason=Resources``; a one-role job it refuses (``refused``) in words
        that do not name the node count.
        """
        proc = run(
            ["scontrol", "show", "partition", "-o", *([req.partition] if req.partition else [])]
        )
        if proc.returncode != 0:
            return  # sbatch will say what is wrong with the partition
        for line in proc.stdout.splitlines():
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if req.partition is None and fields.get("Default") != "YES":
                continue
            total = fields.get("TotalNodes", "")
            if not total.isdigit():
                return
            need = sum(r.num_replicas for r in req.replicas.values())
            if need <= int(total):
                return
            partition = f"partition {fields.get('PartitionName', '?')} has TotalNodes={total}"
            if len(req.replicas) > 1:
                parts = " + ".join(f"{r.name}:{r.num_replicas}" for r in req.replicas.values())
                what = f"the heterogeneous job needs {need} nodes at once ({parts})"
            else:
                what = f"role {next(iter(req.replicas))} asks {need} nodes (one per replica)"
            raise SlurmError(
                f"{'sbatch refused the job: ' if refused else ''}{what} but {partition}"
                f"{'' if refused else ', so it would pend forever'}",
                f"ask for at most {total} replicas in all (num_replicas, -j NxM: N), or a "
                "partition with more nodes (run option 'partition')",
            )

    # -- inspection -------------------------------------------------------------------

    def _components(self, app_id: str) -> dict[int, Component]:
        check_job_id(app_id)
        comps: dict[int, Component] = {}
        if self._use_sacct is not False:
            proc = run(
                [
                    "sacct",
                    "--parsable2",
                    "--noheader",
                    f"--format={','.join(SACCT_FIELDS)}",
                    "--jobs",
                    app_id,
                ]
            )
            if proc.returncode == 0:
                comps = parse_sacct(proc.stdout).get(app_id, {})
            elif self._use_sacct:
                raise SlurmError(f"sacct failed: {slurm_message(proc)}")
        live = self._scontrol(app_id)
        if not comps:
            return live
        # Only scontrol knows where the output went and how often the job was requeued,
        # and its state is the current one (accounting learns of a requeue later); sacct
        # knows steps and old jobs, but may not have recorded every component of a
        # heterogeneous job yet.
        for offset, comp in live.items():
            comps.setdefault(offset, comp)
        for offset, comp in comps.items():
            if offset in live:
                comp.state = live[offset].state
                comp.reason = live[offset].reason
                comp.stdout = live[offset].stdout
                comp.restarts = live[offset].restarts
                comp.task_job_id = live[offset].task_job_id
                comp.workdir = comp.workdir or live[offset].workdir
                if not comp.comment:
                    comp.comment = live[offset].comment
        return comps

    def _scontrol(self, app_id: str) -> dict[int, Component]:
        proc = run(["scontrol", "show", "job", "-o", app_id])
        if proc.returncode != 0:
            if "invalid job id" in (proc.stderr + proc.stdout).lower():
                return {}
            raise SlurmError(f"scontrol show job failed: {slurm_message(proc)}")
        return parse_scontrol(proc.stdout)

    def describe_many(self, app_ids: Sequence[str]) -> dict[str, DescribeAppResponse | None]:
        """One ``sacct`` for every app (and one ``squeue`` for those accounting has not
        recorded yet); an app that has not ended is described by its state alone, one
        that has (or that neither knows) by ``describe``, once."""
        from torchx.schedulers.slurm_array import describe_tasks

        ids = list(dict.fromkeys(app_ids))
        for app_id in ids:
            check_job_id(app_id)
        states = describe_tasks(ids, ids, self._use_sacct) if ids else {}
        out: dict[str, DescribeAppResponse | None] = {}
        for app_id in ids:
            task = states.get(app_id)
            if task is None or is_terminal(task.state):
                out[app_id] = self.describe(app_id)
            else:
                out[app_id] = DescribeAppResponse(app_id, task.state, msg=task.slurm_state)
        return out

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        comps = self._components(app_id)
        if not comps:
            return None
        leader = comps[min(comps)]
        roles = roles_from_comment(leader.comment)
        state = job_app_state({offset: c.state for offset, c in comps.items()})
        job_dir = leader.workdir or (os.path.dirname(leader.stdout) if leader.stdout else "")
        requeues, requeue_failure = read_requeues(
            job_dir, app_id, leader.task_job_id, before=leader.restarts
        )
        # The script stopped the app on the time limit's warning: Slurm saw a plain exit,
        # but the time limit is why it ended.
        stopped_at_limit = requeue_failure.startswith(TIMEOUT_REASON_PREFIX)
        roles_statuses = []
        failed = []
        for offset in sorted(comps):
            comp = comps[offset]
            steps = comp.steps
            name, count = roles[offset] if offset < len(roles) else ("", 1)
            name = name or (steps[-1].name if steps else "") or f"component-{offset}"
            replicas = replica_statuses(app_id, name, count, comp, state, job_dir, leader.restarts)
            slurm_word = "TIMEOUT" if stopped_at_limit else state_word(comp.state)
            for r in replicas:
                if r.state == AppState.FAILED:
                    who = name if count == 1 else f"{name} replica {r.id}"
                    if slurm_word in _ENDED_BY_SLURM:
                        # Slurm ended it (a time limit...): its word says why, not the
                        # signal it sent.
                        failed.append(f"{who}: {slurm_word}")
                    elif r.exit_code is not None:
                        failed.append(f"{who} {exit_reason(r.exit_code)}")
                    else:
                        failed.append(f"{who}: {slurm_word or 'FAILED'}")
            roles_statuses.append(RoleStatus(name, replicas))
        for role_status in roles_statuses:
            for r in role_status.replicas:
                r.attempt = (leader.restarts or 0) + 1
        if requeue_failure and state == AppState.FAILED:
            failed.insert(0, requeue_failure.removeprefix(TIMEOUT_REASON_PREFIX).strip())
        return DescribeAppResponse(
            app_id=app_id,
            state=state,
            # requeues after a warning are preemptions, not restarts after a failure
            num_restarts=max(0, (leader.restarts or 0) - requeues),
            num_preemptions=requeues,
            msg="; ".join(failed) or pending_reason(state, comps) or leader.state,
            roles_statuses=roles_statuses,
            # replica counts let callers (e.g. ``torchx log``) find every replica's output
            roles=[Role(r.role, image="", num_replicas=len(r.replicas)) for r in roles_statuses],
        )

    def list(self) -> list[ListAppResponse]:
        """This user's torchx jobs: ended ones from accounting, live and recent from squeue.

        sacct alone misses a job for a few seconds after it starts or ends: slurmctld sends
        the full job record to slurmdbd asynchronously, and until it lands sacct knows
        only a placeholder named ``allocation`` that its time-window query does not match.
        ``squeue --states=all`` still holds such jobs (for ``MinJobAge``), so it wins.
        """
        out: dict[str, ListAppResponse] = {}
        if self._use_sacct is not False:
            out.update(self._list_sacct())
        out.update(self._list_squeue())
        return sorted(out.values(), key=_job_order)

    def list_newest(self, submitted_after: datetime | None = None) -> Iterator[ListAppResponse]:
        """``list()`` newest first (``torchx list``): by job id, which Slurm gives out in
        submission order, so jobs submitted within the same second keep their order."""
        if submitted_after is not None and submitted_after.tzinfo is not None:
            submitted_after = submitted_after.astimezone().replace(tzinfo=None)
        for app in reversed(self.list()):
            submitted = app.submitted_at
            if submitted_after is None or submitted is None or submitted >= submitted_after:
                yield app

    def _list_sacct(self) -> dict[str, ListAppResponse]:
        proc = run(
            [
                "sacct",
                "--parsable2",
                "--noheader",
                "--allocations",
                # root (and Slurm operators) would see every user's jobs by default
                f"--user={os.getuid()}",
                # sacct's default window starts at midnight today
                f"--starttime=now-{LIST_DAYS}days",
                f"--format={','.join(SACCT_FIELDS)}",
            ]
        )
        if proc.returncode != 0:
            if self._use_sacct:
                raise SlurmError(f"sacct failed: {slurm_message(proc)}")
            return {}
        out = {}
        for job_id, comps in parse_sacct(proc.stdout).items():
            lead = comps[min(comps)]
            if lead.comment.startswith("torchx:") and not refused(lead.state, lead.nodes):
                states = {off: c.state for off, c in comps.items()}
                out[job_id] = _listed(
                    job_id,
                    job_app_state(states),
                    lead.name,
                    sweep_from_comment(job_id, lead.comment),
                    (lead.submit, lead.start, lead.end),
                )
        return out

    def _list_squeue(self) -> dict[str, ListAppResponse]:
        # the comment last, so that a '|' in it cannot shift the other fields
        fmt = "--format=%i|%j|%T|%N|%V|%S|%e|%k"
        # --array: one line per array task, a pending one too (a sweep's waiting trials are
        # apps with their own ids, A_I, as on local schedulers), never a folded A_[2-5%2]
        proc = run(["squeue", "--me", "--array", "--states=all", "--noheader", fmt])
        if proc.returncode != 0:
            raise SlurmError(f"squeue failed: {slurm_message(proc)}")
        states: dict[str, dict[int, str]] = {}
        names: dict[str, str] = {}
        sweeps: dict[str, str] = {}
        times: dict[str, tuple[str, str, str]] = {}
        for line in proc.stdout.splitlines():
            parts = line.split("|", 7)
            # a heterogeneous job shows one line per component, as JOBID+OFFSET
            job_id, _, offset = parts[0].partition("+")
            if len(parts) != 8 or not JOB_ID.match(job_id) or not (offset or "0").isdigit():
                raise SlurmOutputError(
                    "squeue", line, f"expected {fmt.partition('=')[2]} (JOBID[+OFFSET] first)"
                )
            _, name, state, nodes, submit, start, end, comment = parts
            if comment.startswith("torchx:") and not refused(state, nodes):
                states.setdefault(job_id, {})[int(offset or 0)] = state
                if offset in ("", "0"):
                    names[job_id] = name
                    sweeps[job_id] = sweep_from_comment(job_id, comment)
                    times[job_id] = (submit, start, end)
        return {
            job_id: _listed(
                job_id,
                job_app_state(st),
                names.get(job_id, ""),
                sweeps.get(job_id, ""),
                times.get(job_id, ("", "", "")),
            )
            for job_id, st in states.items()
        }

    def _log_dir(self, app_id: str) -> str | None:
        comps = self._components(app_id)
        if not comps:
            return None
        lead = comps[min(comps)]
        if lead.workdir:
            return lead.workdir
        if lead.stdout:
            return os.path.dirname(lead.stdout)
        return None

    def _replica_log(self, request: LogRequest) -> Iterable[str]:
        """The replica's ``.out`` or ``.err`` file; combined reads both, their lines
        interleaved only as finely as they are polled while following (an ended job's
        log: all of stdout, then all of stderr), since the files carry no line times."""
        log_dir = self._log_dir(request.app_id)
        if log_dir is None:
            raise SpecsError(
                "app_id",
                request.app_id,
                "Slurm no longer knows this job or where it ran (see sacct)",
            )
        suffixes = {Stream.STDOUT: ("out",), Stream.STDERR: ("err",)}
        readers = [
            FileLines(Path(log_dir) / log_name(request.app_id, request.role_name, request.k, s))
            for s in suffixes.get(request.stream, ("out", "err"))
        ]

        def each(read: Callable[[FileLines], Iterator[str]]) -> Iterator[str]:
            for reader in readers:
                path = Path(reader.path)
                yield from _cut_by_time(read(reader), path, request.since, request.until)

        return itertools.chain(
            self._follow(
                request.app_id, lambda: each(FileLines.new_lines), request.follow, TAIL_INTERVAL
            ),
            each(FileLines.rest),
        )

    # -- control ----------------------------------------------------------------------

    def requeue(self, app_id: str) -> DescribeAppResponse | None:
        """Stand in for a preemption: Slurm requeues the running job (SIGTERM to every
        replica, SIGKILL after KillWait), counted as a preemption, not a retry; its
        begin-time hold is lifted so it starts again, under the same job id, as soon as
        there is room. None for an unknown job; an ended, pending or array job, or one
        Slurm will not requeue, is refused (see ``_slurm_requeue``)."""
        from torchx.schedulers._slurm_requeue import requeue_job

        return requeue_job(app_id, self._scontrol, self.describe)

    def _cancel_existing(self, app_id: str) -> None:
        proc = run(["scancel", app_id])
        if proc.returncode != 0 and "already completed" not in slurm_message(proc).lower():
            raise SlurmError(f"scancel {app_id} failed: {slurm_message(proc)}")


def _make_job_dir(job_dir: str) -> str | None:
    """Creates the run option ``job_dir`` where it does not exist; returns it if created."""
    if os.path.isdir(job_dir):
        return None
    try:
        os.makedirs(job_dir)
    except OSError as e:
        why = "it is a file" if os.path.isfile(job_dir) else f"cannot create it: {e.strerror}"
        raise SpecsError(
            "run option 'job_dir'",
            job_dir,
            f"{why}; give a directory you can write to, on a file system the nodes share",
        ) from None
    return job_dir


def _job_order(app: ListAppResponse) -> list[int]:
    """Job ids (and array task ids, ``JOB_TASK``) in the order Slurm gave them out."""
    return [int(x) for x in re.findall(r"\d+", app.app_id)]


def _listed(
    job_id: str, state: AppState, name: str, sweep: str, times: Sequence[str]
) -> ListAppResponse:
    """A ``list`` row, with Slurm's submit, start and end times. Slurm prints an estimate as
    the start of a pending job and the time limit as the end of a running one: those are
    left out."""
    submit, start, end = times
    return ListAppResponse(
        job_id,
        state,
        name=name,
        sweep=sweep,
        submitted_at=slurm_time(submit),
        started_at=None if state == AppState.PENDING else slurm_time(start),
        ended_at=slurm_time(end) if is_terminal(state) else None,
    )


def _empty(path: str, *, remove: bool) -> None:
    """Remove ``path`` (``remove``) or what it holds: a copy that did not become a job."""
    if remove:
        shutil.rmtree(path, ignore_errors=True)
        return
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            os.unlink(entry.path)


def _cut_by_time(
    lines: Iterator[str], path: Path, since: datetime | None, until: datetime | None
) -> Iterator[str]:
    """Slurm files carry no per-line times; the file's own times decide, whole or nothing."""
    if since is None and until is None:
        yield from lines
        return
    if not path.exists():
        return
    st = path.stat()
    if since is not None and st.st_mtime < since.timestamp():
        return
    if until is not None and st.st_ctime > until.timestamp() and st.st_mtime > until.timestamp():
        return
    yield from lines


def create_scheduler(
    session_name: str, use_sacct: bool | None = None, **params: Any
) -> SlurmScheduler:
    """The slurm factory; ``use_sacct`` is its only parameter."""
    check_params(BACKEND, params, ("use_sacct",))
    if use_sacct is not None and not isinstance(use_sacct, bool):
        raise SpecsError(
            "slurm scheduler parameter use_sacct", use_sacct, "give True, False or None"
        )
    return SlurmScheduler(session_name, use_sacct=use_sacct)


# pytorch/torchx 0.7's module-level names, for code that imports them from here.
NONE = "<NONE>"
SLURM_STATES: Mapping[str, AppState] = dict(_SLURM_STATES)
# Job-wide sbatch options (written once) and the ones each heterogeneous component repeats.
SBATCH_JOB_OPTIONS = frozenset({"comment", *_JOB_WIDE})
SBATCH_GROUP_OPTIONS = frozenset(_PER_COMPONENT)
# 0.7 kept a file of job directories under this name; this scheduler asks Slurm instead
# (``scontrol``/``sacct`` know each job's WorkDir), so nothing reads or writes it.
SLURM_JOB_DIRS = ".torchxslurmjobdirs"
