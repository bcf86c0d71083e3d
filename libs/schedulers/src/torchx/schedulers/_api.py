"""The contract every scheduler implements, and the answers it gives."""

from __future__ import annotations

import abc
import copy
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Generic, TypedDict, TypeVar

from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    AppStatus,
    CfgVal,
    Role,
    RoleStatus,
    SpecsError,
    is_terminal,
    runopts,
    validate_app,
)

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11+; annotations only, so 3.10 runs this

T = TypeVar("T")
Item = TypeVar("Item")


class Stream(str, Enum):
    """Which output of a replica ``log_iter`` reads."""

    STDOUT = "stdout"
    STDERR = "stderr"
    COMBINED = "combined"


@dataclass
class DescribeAppResponse:
    """What a scheduler knows about one app: its state, each replica, and the app itself.

    ``app`` is the AppDef as far as the scheduler can rebuild it (None if it cannot);
    ``roles`` are its roles, kept separately for schedulers that only know those.
    ``app_id`` defaults to ``"<NOT_SET>"``, as in pytorch/torchx.
    """

    app_id: str = "<NOT_SET>"
    # 0.7's default: a scheduler that leaves the state out reports UNSUBMITTED
    state: AppState = AppState.UNSUBMITTED
    num_restarts: int = 0
    msg: str = ""
    structured_error_msg: str = ""
    ui_url: str | None = None
    roles_statuses: list[RoleStatus] = field(default_factory=list)
    roles: list[Role] = field(default_factory=list)
    app: AppDef | None = None
    # Times the app was requeued (warned, stopped and started again); not in num_restarts.
    num_preemptions: int = 0

    def to_status(self) -> AppStatus:
        return AppStatus(
            state=self.state,
            num_restarts=self.num_restarts,
            msg=self.msg,
            structured_error_msg=self.structured_error_msg,
            ui_url=self.ui_url,
            roles=self.roles_statuses,
            num_preemptions=self.num_preemptions,
        )


@dataclass
class ListAppResponse:
    """One app in a scheduler's ``list``; the runner fills ``app_handle``. ``sweep``: the
    sweep the app is a trial of, as ``sweep-ID/INDEX`` (``sweep-ID`` for an app that runs
    every trial), where what the scheduler's list answer already holds says it; else "".

    The first three fields, their order, the ``app_handle`` default, equality and hash
    keep pytorch/torchx's shape: its positional construction, ``set(runner.list())`` and
    ``ListAppResponse(id, state, handle) in runner.list()`` mean the same here. The
    fields after them are this project's, describe the app rather than name it (so
    equality leaves them out), and take keywords.
    """

    app_id: str
    state: AppState
    app_handle: str = "<NOT_SET>"
    name: str = field(default="", compare=False)
    submitted_at: datetime | None = field(default=None, compare=False)
    started_at: datetime | None = field(default=None, compare=False)
    ended_at: datetime | None = field(default=None, compare=False)
    sweep: str = field(default="", compare=False)

    # Written out (a dataclass with eq leaves it None): the fields equality compares.
    def __hash__(self) -> int:
        return hash((self.app_id, self.app_handle, self.state))


class LogOptions(TypedDict, total=False):
    """``log_iter``'s options after the replica, for the methods that pass them on."""

    regex: str | None
    since: datetime | None
    until: datetime | None
    should_tail: bool
    streams: Stream | None


@dataclass(frozen=True)
class LogRequest:
    """What ``log_iter`` was asked for, checked: replica ``k`` of ``role_name``'s ``stream``,
    between ``since`` and ``until`` (None: unbounded), followed until the app ends if
    ``follow``."""

    app_id: str
    role_name: str
    k: int
    stream: Stream
    since: datetime | None = None
    until: datetime | None = None
    follow: bool = False


class Scheduler(abc.ABC, Generic[T]):
    """Turns AppDefs into requests (``submit_dryrun``) and runs them (``schedule``).

    ``T`` is the scheduler's own request type, shown by dryruns and submitted unchanged.
    A subclass implements ``_submit_dryrun``, ``schedule``, ``describe``, ``list``,
    ``_cancel_existing`` and ``_replica_log``, and may add run options in ``_run_opts``;
    the template methods here do what every scheduler shares: validate the AppDef, resolve
    the run options (with the workspace's, for a :class:`~torchx.workspace.WorkspaceMixin`),
    check and filter log requests, and make ``cancel`` of an unknown or ended app a no-op.
    ``torchx.schedulers.replicas`` fills each replica's role and environment.
    """

    #: The most replicas one app may ask of this scheduler, all roles together. Requests
    #: are built per replica, so without a bound a typo such as ``--num_replicas
    #: 100000000`` takes all memory before anything is submitted; a scheduler whose
    #: backend takes more (or fewer) sets its own.
    max_replicas: ClassVar[int] = 10_000

    #: The name a Runner registered this scheduler under (``"custom"`` for a plug-in
    #: registered so), which a dry run gives ``_validate`` and sets as the result's
    #: ``scheduler``; None for a scheduler made directly, which uses its ``backend``. Set
    #: once: an instance registered again (a factory returning one shared object) keeps
    #: the first name, and each Runner passes its own name to its dry runs.
    registered_name: str | None = None

    #: The backend pytorch/torchx 0.7's scheduler of this kind had, which each role's
    #: ``pre_proc`` is given as 0.7 gave it (``"local"`` for local_cwd, ``"docker"`` for
    #: local_docker); None where it is ``backend``, as for every plug-in.
    pre_proc_backend: ClassVar[str | None] = None

    def __init__(self, backend: str, session_name: str) -> None:
        self.backend = backend
        self.session_name = session_name

    # -- submission -------------------------------------------------------------------

    def run_opts(self) -> runopts:
        """The run options this scheduler accepts (``-cfg k=v``): its own and its
        workspace's."""
        opts = self._run_opts()
        from torchx.workspace.api import WorkspaceMixin

        if isinstance(self, WorkspaceMixin):
            opts.update(self.workspace_opts())
        return opts

    def _run_opts(self) -> runopts:
        """The scheduler's own run options; none unless a subclass adds some."""
        return runopts()

    def submit_dryrun(
        self,
        app: AppDef,
        cfg: Mapping[str, CfgVal] | None = None,
        *,
        scheduler: str | None = None,
    ) -> AppDryRunInfo[T]:
        """Validate ``app`` and return the exact request ``schedule`` would submit; no side
        effects. A name that could escape a directory (``../x``) is refused here.
        ``scheduler``: the name this scheduler is registered under (default its
        ``registered_name``, else its ``backend``), given to ``_validate`` and set as the
        result's ``scheduler``."""
        return self._dryrun_resolved(app, self.run_opts().resolve(cfg), scheduler=scheduler)

    def _dryrun_resolved(
        self,
        app: AppDef,
        resolved: dict[str, CfgVal],
        submit: Callable[[AppDef, dict[str, CfgVal]], AppDryRunInfo[T]] | None = None,
        scheduler: str | None = None,
    ) -> AppDryRunInfo[T]:
        """``submit_dryrun`` with the run options already resolved (once for many apps);
        ``submit`` stands in for ``_submit_dryrun``. Each role's ``pre_proc`` then edits the
        request in turn, given the scheduler's backend as pytorch/torchx 0.7 gave it
        (``pre_proc_backend``, else ``backend``)."""
        validate_app(app)
        self._check_replica_count(app)
        name = scheduler or self.registered_name or self.backend
        if _VALIDATED.get() is not self:  # else registered_dryrun ran it for this dry run
            self._validate(app, name)
        info = (submit or self._submit_dryrun)(app, resolved)
        backend = self.pre_proc_backend or self.backend
        for role in app.roles:
            info = role.pre_proc(backend, info)
        info.app = app
        info.cfg = resolved
        info.scheduler = name
        return info

    def _validate(self, app: AppDef, scheduler: str) -> None:
        """A subclass's own checks of a valid ``app`` before its request is built; raise to
        refuse it. pytorch/torchx 0.7's hook (its Runner called it), so a custom scheduler's
        override still runs, once per dry run (see :func:`registered_dryrun`); ``scheduler``
        is the name the scheduler is registered under (a Runner's), else its ``backend``."""

    def _check_replica_count(self, app: AppDef) -> None:
        total = 0
        for role in app.roles:
            total += role.num_replicas
            if total > self.max_replicas:
                several = total != role.num_replicas
                raise SpecsError(
                    "num_replicas of all roles" if several else f"role {role.name!r} num_replicas",
                    total,
                    f"the {self.backend} scheduler takes at most {self.max_replicas} replicas "
                    "per app (its max_replicas); lower --num_replicas or split the app",
                )

    @abc.abstractmethod
    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[T]:
        """The request for a valid ``app`` and resolved ``cfg``."""

    @abc.abstractmethod
    def schedule(self, dryrun_info: AppDryRunInfo[T]) -> str:
        """Submit a request made by ``submit_dryrun``; returns the app id."""

    def submit(
        self,
        app: AppDef,
        cfg: Mapping[str, CfgVal] | None = None,
        workspace: str | None = None,
    ) -> str:
        """Validate, dry-run and schedule ``app`` (with ``workspace`` built into it, if
        given); returns the app id. The Runner does the same and also reads config files."""
        validate_app(app)
        if workspace:
            app, cfg = self.with_workspace(app, self.run_opts().resolve(cfg), workspace)
        name = self.registered_name or self.backend
        return self.schedule(registered_dryrun(self, app, cfg, name))

    def default_workspace(self, cfg: Mapping[str, CfgVal]) -> str | None:
        """The workspace the ``torchx`` CLI uses when none is given (``cfg``: the resolved
        run options); None here, as a scheduler without workspaces takes none. A
        :class:`~torchx.workspace.WorkspaceMixin` (or a scheduler overriding
        ``with_workspace``) names the current directory, as pytorch/torchx 0.7's CLI did."""
        return None

    def with_workspace(
        self, app: AppDef, cfg: Mapping[str, CfgVal], workspace: str
    ) -> tuple[AppDef, dict[str, CfgVal]]:
        """A copy of ``app`` with ``workspace`` built into its roles.

        For a :class:`~torchx.workspace.WorkspaceMixin`, each distinct role image is built
        once with ``build_workspace_and_update_role``; other schedulers refuse. A local
        directory (a path or ``file://`` URL) is passed as an absolute path; anything else
        is passed as given, for the mixin to read or refuse (as in 0.7, a custom mixin may
        take a URL or a build target).
        """
        from torchx.workspace.api import WorkspaceMixin

        if not isinstance(self, WorkspaceMixin):
            raise SpecsError(
                "workspace",
                workspace,
                f"the {self.backend} scheduler does not support workspaces; leave it out",
            )
        path = self._local_workspace(workspace)
        # as 0.7's Runner gave it: a mixin may read an option's default (its own too)
        resolved = self.run_opts().resolve(cfg)
        new_app = copy.deepcopy(app)
        built: dict[str, str] = {}
        for role in new_app.roles:
            if role.image in built:
                role.image = built[role.image]
                continue
            before = role.image
            self.build_workspace_and_update_role(role, path, resolved)
            built[before] = role.image
        return new_app, resolved

    def _local_workspace(self, workspace: str) -> str:
        """``workspace`` as an absolute path when it names a local directory, else as given."""
        from torchx.workspace.api import workspace_dir

        try:
            path = os.path.abspath(os.path.expanduser(workspace_dir(workspace)))
        except SpecsError:  # a URL other than file://
            return workspace
        return path if os.path.isdir(path) else workspace

    def _workspace_path(self, workspace: str) -> str:
        """``workspace`` (a path or ``file://`` URL) as an absolute path; a SpecsError
        unless it is a directory."""
        path = self._local_workspace(workspace)
        if not os.path.isdir(path):
            raise SpecsError(
                "workspace", workspace, f"the {self.backend} workspace must be a directory"
            )
        return path

    # -- inspection -------------------------------------------------------------------

    @abc.abstractmethod
    def describe(self, app_id: str) -> DescribeAppResponse | None:
        """The app's current state, or None if this scheduler does not know it."""

    def exists(self, app_id: str) -> bool:
        return self.describe(app_id) is not None

    def describe_many(self, app_ids: Sequence[str]) -> dict[str, DescribeAppResponse | None]:
        """Each app's description (None: this scheduler does not know it), for callers that
        watch many apps at once (``wait_many``). Here one ``describe`` each; a scheduler
        whose backend answers for many apps in one query overrides it, and may describe
        an app that has not ended by its state and message alone."""
        return {app_id: self.describe(app_id) for app_id in dict.fromkeys(app_ids)}

    def answers_many(self) -> bool:
        """Whether ``describe_many`` asks the backend once for all the apps it is given."""
        return type(self).describe_many is not Scheduler.describe_many

    def list(self) -> list[ListAppResponse]:
        """The apps this scheduler knows about."""
        from torchx.schedulers._errors import SchedulerError

        raise SchedulerError(self.backend, "this scheduler cannot list its apps")

    # The streams ``log_iter`` can read; the first is read when none is asked for.
    log_streams: tuple[Stream, ...] = (Stream.COMBINED, Stream.STDOUT, Stream.STDERR)

    def log_iter(
        self,
        app_id: str,
        role_name: str | None = None,
        k: int = 0,
        regex: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        should_tail: bool = False,
        streams: Stream | None = None,
    ) -> Iterable[str]:
        """Lines (newline kept) printed by replica ``k`` of ``role_name``.

        ``role_name`` may be left out for an app of one role (0.7's Ray scheduler took
        that form). ``regex`` keeps matching lines; ``since``/``until`` bound them in time;
        ``should_tail`` follows the output until the app ends. The request is checked here,
        for every scheduler alike; the scheduler's ``_replica_log`` reads the lines.
        """
        if role_name is None:
            role_name = self._only_role(app_id)
        request = self._log_request(app_id, role_name, k, since, until, should_tail, streams)
        pattern = compile_regex(regex)  # a bad pattern is reported before any line is read
        lines = self._replica_log(request)
        if pattern is None:
            return lines
        return (line for line in lines if pattern.search(line))

    def _only_role(self, app_id: str) -> str:
        desc = self.describe(app_id)
        if desc is None:
            raise SpecsError("app_id", app_id, f"give an app the {self.backend} scheduler knows")
        names = [r.name for r in desc.roles] or [r.role for r in desc.roles_statuses]
        if not names:
            raise SpecsError(
                "role_name",
                None,
                f"the {self.backend} scheduler reports no roles for {app_id} (yet); "
                "name the role to read",
            )
        if len(names) != 1:
            raise SpecsError("role_name", None, f"name one of the app's roles: {', '.join(names)}")
        return names[0]

    def log_iter_timed(
        self, app_id: str, role_name: str, k: int = 0, **options: Unpack[LogOptions]
    ) -> Iterable[tuple[datetime | None, str]]:
        """``log_iter``'s lines, each with the local time it was written (``torchx log
        --timestamps``), from schedulers whose backend keeps it (``_replica_log_timed``)."""
        since, until = options.get("since"), options.get("until")
        should_tail, streams = options.get("should_tail", False), options.get("streams")
        request = self._log_request(app_id, role_name, k, since, until, should_tail, streams)
        # a bad pattern is reported before any line is read
        pattern = compile_regex(options.get("regex"))
        lines = self._replica_log_timed(request)
        if pattern is None:
            return lines
        return ((t, line) for t, line in lines if pattern.search(line))

    def _replica_log_timed(self, request: LogRequest) -> Iterable[tuple[datetime | None, str]]:
        """``_replica_log`` with each line's time; schedulers whose backend keeps one
        implement it."""
        raise SpecsError(
            "timestamps",
            True,
            f"the {self.backend} scheduler keeps no time for each log line; leave timestamps out",
        )

    def _log_request(
        self,
        app_id: str,
        role_name: str,
        k: int,
        since: datetime | None,
        until: datetime | None,
        follow: bool,
        streams: Stream | None,
    ) -> LogRequest:
        """``log_iter``'s arguments, checked."""
        if since is not None and until is not None and since.timestamp() > until.timestamp():
            raise SpecsError("since", since.isoformat(), f"give a time before until ({until})")
        return LogRequest(app_id, role_name, k, self._log_stream(streams), since, until, follow)

    def _log_stream(self, streams: Stream | None) -> Stream:
        if streams is None:
            return self.log_streams[0]
        try:
            stream = Stream(streams)
        except ValueError:
            stream = None
        if stream not in self.log_streams:
            kept = " or ".join(s.value for s in self.log_streams)
            raise SpecsError(
                "streams",
                getattr(streams, "value", streams),
                f"the {self.backend} scheduler's logs give {kept}; ask for "
                f"{'that' if len(self.log_streams) == 1 else 'one of those'} or leave streams out",
            )
        return stream

    def _replica_log(self, request: LogRequest) -> Iterable[str]:
        """The lines of one replica's log, as ``request`` (already checked) asks.

        The one hook a scheduler implements for logs. It checks that the replica exists
        before it returns (so an unknown one is an error at the call, not at the first
        line), keeps lines within ``since``/``until`` as its backend can (``in_window``
        does it for timed lines), and follows while ``request.follow`` (``_follow`` polls).
        """
        from torchx.schedulers._errors import SchedulerError

        raise SchedulerError(self.backend, "this scheduler keeps no logs torchx can read")

    def _ended(self, app_id: str) -> bool:
        """Whether the app has ended, or is no longer known."""
        desc = self.describe(app_id)
        return desc is None or is_terminal(desc.state)

    def _follow(
        self,
        app_id: str,
        read_more: Callable[[], Iterable[Item]],
        follow: bool,
        interval: float = 0.2,
    ) -> Iterator[Item]:
        """What ``read_more`` returns, called again while the app runs if ``follow``.

        The app's end is checked *before* each read, so what it wrote last is still read.
        """
        while True:
            ended = not follow or self._ended(app_id)
            got = False
            for item in read_more():
                got = True
                yield item
            if ended:
                return
            if not got:
                time.sleep(interval)

    # How ``wait`` polls where ``_await_end`` cannot block: the first pause in seconds,
    # doubled after each look up to the second.
    _wait_poll_s = (0.01, 1.0)

    def wait(self, app_id: str, timeout: float | None = None) -> DescribeAppResponse | None:
        """Block until the app is terminal or ``timeout`` seconds pass; its last description.

        Between two looks it blocks in ``_await_end`` where the scheduler can be told when
        an app ends, and otherwise polls with a growing interval.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        pauses = self._poll_pauses()
        while True:
            desc = self.describe(app_id)
            if desc is None or is_terminal(desc.state):
                return desc
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return desc
            if not self._await_end(app_id, left):
                pause = next(pauses)
                time.sleep(pause if left is None else min(pause, left))

    def wait_many(
        self, app_ids: Sequence[str], timeout: float | None = None, interval: float | None = None
    ) -> Iterator[tuple[str, DescribeAppResponse | None]]:
        """``(app_id, description)`` for each app as it ends; once ``timeout`` seconds
        pass, those still running come last with their current description. Each look
        asks about every app still running at once (``describe_many``); looks are apart
        by a pause that grows as ``wait``'s does, at most ``interval`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pauses = self._poll_pauses(interval)
        left = list(dict.fromkeys(app_ids))
        while left:
            descs = self.describe_many(left)
            running = []
            for app_id in left:
                desc = descs.get(app_id)
                if desc is None or is_terminal(desc.state):
                    yield app_id, desc
                else:
                    running.append(app_id)
            left = running
            now = time.monotonic()
            if left and deadline is not None and now >= deadline:
                for app_id in left:
                    yield app_id, self.describe(app_id)  # all it says, not its state alone
                return
            if left:
                step = next(pauses)
                time.sleep(step if deadline is None else max(min(step, deadline - now), 0.0))

    def _poll_pauses(self, longest: float | None = None) -> Iterator[float]:
        """The pauses between two looks of ``wait`` and ``wait_many``: the first of
        ``_wait_poll_s``, doubled after each look up to its second (or ``longest``, if
        shorter)."""
        pause, most = self._wait_poll_s
        if longest is not None and longest > 0:
            most = min(most, longest)
        while True:
            yield min(pause, most)
            pause = min(pause * 2, most)

    def _await_end(self, app_id: str, timeout: float | None) -> bool:
        """Block until the app may have ended, or ``timeout`` seconds (None: no limit);
        False where this scheduler cannot tell, and ``wait`` polls instead."""
        return False

    # -- control ----------------------------------------------------------------------

    def ended_app_holds_objects(self, app_id: str) -> bool:
        """Whether the app, once ended, may still hold objects on the backend (a cluster's
        Jobs, Services, pods) that only ``cancel`` deletes. Where True, ``cancel`` acts on
        the ended app too, and callers that skip cancelling an ended app must not skip it;
        asked of an app that ``describe`` knows. False here: nothing is left to delete."""
        return False

    def cancel(self, app_id: str) -> None:
        """Stop the app; a no-op for an app this scheduler does not know or that ended,
        unless ``ended_app_holds_objects`` (then its objects are deleted).

        Returns once the backend accepted the request; ``wait`` blocks until the app ends.
        """
        desc = self.describe(app_id)
        if desc is None:
            return
        if is_terminal(desc.state) and not self.ended_app_holds_objects(app_id):
            return
        self._cancel_existing(app_id)

    @abc.abstractmethod
    def _cancel_existing(self, app_id: str) -> None:
        """Stop an app that exists (``describe`` knows it) and has not ended, or delete
        what an ended one left where ``ended_app_holds_objects`` says so."""

    def close(self) -> None:
        """Release what this scheduler object holds (clients, connections)."""

    def __enter__(self) -> Scheduler[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# The scheduler whose ``_validate`` registered_dryrun has run for the dry run under way
# (in this thread or task), so that the base class's dry run does not run it again.
_VALIDATED: ContextVar[object | None] = ContextVar("torchx_validated_scheduler", default=None)


def registered_dryrun(
    scheduler: Scheduler[T], app: AppDef, cfg: Mapping[str, CfgVal] | None, name: str
) -> AppDryRunInfo[T]:
    """``scheduler.submit_dryrun(app, cfg)`` for the scheduler registered as ``name``, as a
    Runner makes it: ``_validate(app, name)`` runs exactly once, and the result's
    ``scheduler`` is ``name``.

    A subclass that overrides ``submit_dryrun`` (pytorch/torchx 0.7's custom schedulers do,
    some without calling ``super()``) gets what 0.7's Runner gave it: an app already
    checked (``validate_app``, the replica bound, then ``_validate``) and the run options
    resolved (defaults filled in); a ``super()`` call inside does not run ``_validate``
    again.
    """
    if type(scheduler).submit_dryrun is Scheduler.submit_dryrun:
        return scheduler.submit_dryrun(app, cfg, scheduler=name)
    validate_app(app)
    scheduler._check_replica_count(app)
    scheduler._validate(app, name)
    resolved = scheduler.run_opts().resolve(cfg)
    token = _VALIDATED.set(scheduler)
    try:
        info = scheduler.submit_dryrun(app, resolved)  # 0.7's override takes (app, cfg)
    finally:
        _VALIDATED.reset(token)
    info.scheduler = name
    return info


def split_lines(text: str) -> list[str]:
    """``text`` cut after each newline, which each line keeps (the last may have none)."""
    return text.splitlines(keepends=True)


def split_lines_iterator(chunks: Iterable[str]) -> Iterator[str]:
    """The lines of every chunk in turn (see ``split_lines``)."""
    for chunk in chunks:
        yield from split_lines(chunk)


def compile_regex(regex: str | None) -> re.Pattern[str] | None:
    """``regex`` compiled, or None; a bad pattern is a SpecsError naming it."""
    if regex is None:
        return None
    try:
        return re.compile(regex)
    except re.error as e:
        raise SpecsError("regex", regex, f"not a valid regular expression ({e})") from None


def filter_regex(regex: str | None, data: Iterable[str]) -> Iterator[str]:
    """Lines of ``data`` matching ``regex`` (searched anywhere in the line), or all lines.

    A bad pattern is reported here, before any line is read.
    """
    pattern = compile_regex(regex)
    if pattern is None:
        return iter(data)
    return (line for line in data if pattern.search(line))


def in_window(
    timed_lines: Iterable[tuple[float, str]], since: datetime | None, until: datetime | None
) -> Iterator[str]:
    """The lines of ``(unix time, line)`` pairs written between ``since`` and ``until``."""
    lo = since.timestamp() if since is not None else None
    hi = until.timestamp() if until is not None else None
    for t, line in timed_lines:
        if (lo is None or t >= lo) and (hi is None or t <= hi):
            yield line
