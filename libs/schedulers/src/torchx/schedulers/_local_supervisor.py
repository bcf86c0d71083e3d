"""The per-app supervisor of the local scheduler: a small detached process that owns replicas.

It is started as ``python -I -S _local_start.py _local_supervisor APP_DIR`` and uses only
the standard library (so do the ``_local_*`` modules it imports), so it starts in
milliseconds. It

- starts one process per replica (posix_spawn), each in its own process group, and tells
  a watchdog it forked at start (``_local_watchdog``) each new group: should the supervisor
  die, even by SIGKILL, the watchdog kills every group, so no replica outlives it. (A
  parent-death signal set in each child would need a Python fork per replica, which
  measured about three times the cost of posix_spawn for 256 replicas.) The apps of a
  group (``_local_group``) are supervised one after another by workers the group's
  process forked, and watched by that process instead.
- copies each replica's stdout and stderr into
  ``APP_DIR/<role>/<k>/{stdout,stderr,combined}.log`` and records when each chunk
  arrived (``.times``), so logs can be cut by time;
- waits for replicas without polling: SIGCHLD and SIGTERM wake a ``select`` through
  ``signal.set_wakeup_fd``; once a second it also checks that the app directory still
  exists (a deleted app is stopped) and looks for the cancel marker;
- restarts replicas per role ``max_retries`` and ``retry_policy``, first ending what the
  failed attempt left in its process group;
- kills whole process trees (SIGTERM, then SIGKILL after a grace period), and on Linux
  adopts orphaned grandchildren (PR_SET_CHILD_SUBREAPER) so none outlives the app;
- writes ``APP_DIR/.torchx/state.json`` atomically whenever something changes, with each
  replica's process group, and exits right after writing the final state (waiters watch
  for that exit). Should the supervisor itself fail, it kills every replica group first
  and records why; should it be killed, any torchx process can kill the recorded groups.
  While the disk is full the state on disk may lag; the final state uses the room the
  scheduler reserved at submit (``.torchx/reserve``), or waits for room (``record_end``).

Any process can cancel the app: create ``.torchx/cancel``, then send SIGTERM to the pid
recorded in the state (the marker covers the moment before the pid is recorded).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

from torchx.schedulers._local_ending import end_groups, kill_leftovers, terminate
from torchx.schedulers._local_processes import (
    collect_from_now_on,
    process_start_token,
    raise_fd_limit,
    signal_quietly,
    which,
)
from torchx.schedulers._local_replica import Replica
from torchx.schedulers._local_requeue import (
    ASKED_FILE_ENV,
    ATTEMPT_ENV,
    asked_file,
    asked_requeue,
    on_requeue_exit,
    requeue_app,
    take_requeue_marker,
)
from torchx.schedulers._local_state_files import (
    CANCEL_FILE,
    CLOSED_MARKER,
    GO_ON_STDIN,
    HOUSEKEEPING_INTERVAL,
    MAX_GRACE_S,
    MAX_MSG_CHARS,
    META_DIR,
    NO_SPACE,
    REQUEST_FILE,
    STATE_FILE,
    STATE_VERSION,
    STREAM_FILES,
    free_reserve,
    read_data,
    supervisor_log_hint,
    told_to_go,
    write_atomic,
)
from torchx.schedulers._local_supervisor_process import (
    handle_waking_signals,
    this_process,
    watch_children,
)
from torchx.schedulers._local_watchdog import GUARD_DONE, Watchdog
from torchx.schedulers.exit_codes import signal_name

# Kept off the import path at run time: every import delays the start of the replicas.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# describe() from another process may see state this much behind; the final state is
# always written at once.
STATE_WRITE_INTERVAL = 0.02
# How long the supervisor waits before it tries again a state write refused for lack of room.
SPACE_RETRY_S = 1.0
LINUX = sys.platform.startswith("linux")


class Supervisor:
    def __init__(
        self,
        app_dir: str,
        guard_w: int | None = None,
        shared: bool = False,
        guard_pid: int | None = None,
    ) -> None:
        self.app_dir = app_dir
        # shared: this process supervises other apps before and after this one (a
        # group's worker, ``_local_group``). A signal then cancels only an app whose
        # cancel marker is there (a canceller writes it first): one sent for an app
        # that ended meanwhile must not cancel the next. Waiters cannot wait for this
        # process to exit either; the state says so.
        self.shared = shared
        self.meta = os.path.join(app_dir, META_DIR)
        meta_stat = os.stat(self.meta)
        self.meta_id = (meta_stat.st_dev, meta_stat.st_ino)
        request = read_data(os.path.join(self.meta, REQUEST_FILE))
        self.request: dict[str, Any] = request
        self.app_id: str = request["app_id"]
        grace = float(request.get("cancel_grace_s", 5.0))
        # The scheduler refuses these at submit; a request written by hand gets the default.
        self.grace = grace if 0.0 <= grace <= MAX_GRACE_S else 5.0
        self.roles: dict[str, dict[str, Any]] = request["roles"]
        self.replicas = [Replica(spec, app_dir) for spec in request["replicas"]]
        self.by_pid: dict[int, Replica] = {}
        self.exited: list[Replica] = []
        self.role_restarts = dict.fromkeys(self.roles, 0)
        self.num_restarts = 0
        self.num_preemptions = 0  # requeues, whatever asked for them (not retries)
        self.num_requeues = 0  # those the app asked for by itself (capped)
        self.requeue_requested = False
        self.state = "PENDING"
        self.msg = ""
        self.error = ""
        self.cancel_requested = False
        self.vanished = False  # the app directory was deleted: nothing more is written
        self.log_error = ""  # why output could not be written, once it could not
        self.next_housekeeping = time.monotonic() + HOUSEKEEPING_INTERVAL
        # given: the pipe to a watchdog already there (``main`` forked it, or a group's
        # process watches its apps), and its pid when it is our child
        self.guard_pid: int | None = guard_pid
        self.guard_w: int | None = guard_w
        self.subreaper = False
        # While the app's replicas are first started, each program is looked up on PATH
        # once: (name, PATH, directory) -> its path. None after: a restart looks again.
        self.programs: dict[tuple[str, str, str], str] | None = {}
        self.last_write = 0.0
        self.dirty = True
        self.pid_recorded = False  # no state with this process's pid written yet
        self.started_at = time.time()
        self.ended_at: float | None = None
        # what this process holds for each app it supervises (made with the first)
        self.process = this_process()
        self.start_token = self.process.start_token
        # The directory replicas were last started from; None until the first start,
        # which changes to it whatever this process's directory is: each app's are
        # looked up afresh (a directory removed and made again since the last app).
        self.cwd: str | None = None
        self.devnull = self.process.devnull
        self.poller = select.poll()
        self.watched: dict[int, tuple[Replica, str]] = {}  # pipe fd -> whose output
        self.wake_r = self.process.wake_r
        self.poller.register(self.wake_r, select.POLLIN)

    # -- setup ------------------------------------------------------------------------

    def install(self) -> None:
        if self.guard_w is None:
            self.guard_pid, self.guard_w = fork_watchdog(self.meta)
        if not self.shared:
            # A process that supervises app after app did this once (``close`` leaves
            # them so): each ``signal.signal`` costs as much as a small state write.
            handle_waking_signals()
        signal.set_wakeup_fd(self.process.wake_w, warn_on_full_buffer=False)
        self.subreaper = self.process.subreaper()
        raise_fd_limit(len(self.replicas))

    def watch_children(self) -> None:
        """Be woken when a child ends. Not while the replicas are first started: with
        SIGCHLD left at its default, replicas that end meanwhile do not interrupt that
        loop (a signal and a handler call each); it reaps them between two spawns."""
        watch_children()

    def tell_watchdog(self, line: bytes) -> None:
        if self.guard_w is None:
            return
        try:
            os.write(self.guard_w, line)
        except OSError:
            self.guard_w = None  # it is gone; status/cancel remain the fallback

    # -- state ------------------------------------------------------------------------

    def snapshot(self, compact: bool = False) -> dict[str, Any]:
        """The app's state; ``compact`` leaves out error texts (see ``reserve_bytes``)."""
        return {
            "version": STATE_VERSION,
            "app_id": self.app_id,
            "state": self.state,
            "supervisor_pid": os.getpid(),
            "supervisor_start": self.start_token,
            "supervisor_shared": self.shared,
            "num_restarts": self.num_restarts,
            "num_preemptions": self.num_preemptions,
            "msg": self.msg[:MAX_MSG_CHARS] if compact else self.msg,
            "structured_error_msg": self.error[:MAX_MSG_CHARS] if compact else self.error,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "updated_at": time.time(),
            "replicas": [
                {
                    "role": r.role,
                    "id": r.id,
                    "state": r.state,
                    "pid": r.pid,
                    # each replica leads its own group: what is killed if we are gone
                    "pgid": r.pid if r.pid in self.by_pid else None,
                    "start": self._start_token(r) if r.pid in self.by_pid else None,
                    "exit_code": r.exit_code,
                    "error": "" if compact else r.error,
                    "attempt": r.attempt,
                }
                for r in self.replicas
                if r.state != "PENDING"  # keeps the first write small
            ],
        }

    def _start_token(self, replica: Replica) -> str | None:
        """The start token of a running replica, read when the state is first written with
        it: not while replicas are being started. Until it is reaped, the pid is its own."""
        if not replica.token_read:
            pid = replica.pid
            replica.start_token = process_start_token(pid) if LINUX and pid is not None else None
            replica.token_read = True
        return replica.start_token

    def write_state(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.vanished:
            return
        if force or (self.dirty and now - self.last_write >= STATE_WRITE_INTERVAL):
            try:
                write_atomic(os.path.join(self.meta, STATE_FILE), self.snapshot())
            except FileNotFoundError:
                if self._meta_gone():
                    self._on_vanished()
                    return
                raise
            except OSError as e:
                if e.errno not in NO_SPACE:
                    raise
                # No room: the state on disk lags behind until there is. Tried again a
                # while later; the last state has the reserve (``record_end``).
                self.last_write = now + SPACE_RETRY_S
                return
            self.last_write = now
            self.dirty = False
            if not self.pid_recorded:
                # The first write records the pid and the replicas' groups, then the
                # markers are looked for again: a canceller (or a requeue) that wrote one
                # before the pid was recorded could not signal us; one that comes later does.
                self.pid_recorded = True
                if os.path.exists(os.path.join(self.meta, CANCEL_FILE)):
                    self.cancel_requested = True
                elif take_requeue_marker(self.meta):
                    self.requeue_requested = True

    def record_end(self) -> None:
        """Write the last state, whatever the room on disk: the outcome must not be lost.

        With no room, the space reserved at submit is given back and the write tried
        again, then in compact form. Should other processes take that room first, it is
        tried every ``SPACE_RETRY_S`` until there is room or the app directory is gone;
        the supervisor lives on meanwhile, so the app reads as not ended, never as failed.
        """
        path = os.path.join(self.meta, STATE_FILE)
        compact = False
        while not self.vanished:
            try:
                write_atomic(path, self.snapshot(compact))
                break
            except FileNotFoundError:
                if not self._meta_gone():
                    raise
                self._on_vanished()
            except OSError as e:
                if e.errno not in NO_SPACE:
                    raise
                if free_reserve(self.meta):
                    continue
                if not compact:
                    compact = True
                    continue
                time.sleep(SPACE_RETRY_S)
                if self._meta_gone():
                    self._on_vanished()
        free_reserve(self.meta)  # the app has ended: the room is not needed any more
        self.dirty = False

    # -- events -----------------------------------------------------------------------

    def _meta_gone(self) -> bool:
        try:
            st = os.stat(self.meta)
        except FileNotFoundError:
            return True
        return (st.st_dev, st.st_ino) != self.meta_id

    def _on_vanished(self) -> None:
        print(f"torchx: {self.app_dir} was deleted; stopping the app", flush=True)
        self.vanished = True
        self.cancel_requested = True

    def housekeeping(self) -> None:
        """The once-a-second checks: the app directory exists; no cancel marker was missed."""
        now = time.monotonic()
        if now < self.next_housekeeping:
            return
        self.next_housekeeping = now + HOUSEKEEPING_INTERVAL
        if self._meta_gone():
            self._on_vanished()
        elif os.path.exists(os.path.join(self.meta, CANCEL_FILE)):
            self.cancel_requested = True
        elif take_requeue_marker(self.meta):
            self.requeue_requested = True

    def wait_events(self, timeout: float | None) -> None:
        until_check = max(0.0, self.next_housekeeping - time.monotonic())
        timeout = until_check if timeout is None else min(timeout, until_check)
        ms = max(0, int(timeout * 1000 + 0.999))
        for fd, _ in self.poller.poll(ms):
            if fd == self.wake_r:
                self._read_wakeups()
            elif fd in self.watched:
                self._pump(fd, *self.watched[fd])
        self.reap()

    def _read_wakeups(self) -> None:
        while True:
            try:
                data = os.read(self.wake_r, 512)
            except BlockingIOError:
                return
            if not data:
                return
            stop = signal.SIGTERM in data or signal.SIGINT in data or signal.SIGHUP in data
            if stop and (not self.shared or os.path.exists(os.path.join(self.meta, CANCEL_FILE))):
                self.cancel_requested = True
            if signal.SIGUSR1 in data and take_requeue_marker(self.meta):
                self.requeue_requested = True

    def _pump(self, fd: int, replica: Replica, stream: str) -> bool:
        """Copy one chunk from a replica's pipe; False once nothing more is waiting."""
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return False
        if data:
            if not self.log_error and not self.vanished:
                try:
                    replica.record(stream, data)
                except OSError as e:
                    # Output that cannot be kept ends the app: nothing is lost silently.
                    where = e.filename or replica.dir
                    self.log_error = (
                        f"cannot write the output of {replica.role}/{replica.id} "
                        f"to {where}: {e.strerror}"
                    )
                    self.dirty = True
            return True
        self._unwatch(fd, replica)
        return False

    def _unwatch(self, fd: int, replica: Replica) -> None:
        self.poller.unregister(fd)
        del self.watched[fd]
        stream = replica.pipes.pop(fd)
        os.close(fd)
        if not self.log_error and not self.vanished:
            try:
                if stream not in replica.pipes.values():  # not a new attempt's pipe
                    replica.flush_partial(stream, end_line=bool(replica.pipes))
            except OSError:
                pass  # recorded by the next write that fails, if any

    def _drain(self, replica: Replica) -> None:
        """Copy whatever output of ``replica`` is already waiting in its pipes."""
        for fd, stream in list(replica.pipes.items()):
            # bounded: a grandchild that keeps writing must not stall the supervisor
            for _ in range(256):
                if not self._pump(fd, replica, stream):
                    break

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            replica = self.by_pid.pop(pid, None)
            if replica is None:
                continue  # an adopted orphan
            code = os.waitstatus_to_exitcode(status)
            replica.exit_code = code
            self._drain(replica)
            self.exited.append(replica)
            self.dirty = True

    # -- replicas ---------------------------------------------------------------------

    def spawn(self, replica: Replica, why: str = "") -> None:
        replica.attempt += 1
        if replica.attempt > 1 and not self.log_error and not self.vanished:
            try:
                replica.mark_attempt(why)
            except OSError as e:
                self.log_error = f"cannot write the output of {replica.role}/{replica.id}: {e}"
        replica.exit_code = None
        replica.error = ""
        replica.killed = False
        r_out, w_out = os.pipe()
        r_err, w_err = os.pipe()
        env = {
            **self.process.env,
            **replica.env,
            ATTEMPT_ENV: str(replica.attempt - 1),
            ASKED_FILE_ENV: asked_file(self.meta, replica),
        }
        try:
            replica.pid = self._start(replica.argv, replica.cwd, env, w_out, w_err)
        except (OSError, ValueError) as e:
            os.close(r_out)
            os.close(r_err)
            replica.error = f"torchx: cannot start {replica.argv[0]!r}: {e}"
            try:  # noqa: SIM105 -- contextlib stays unimported: imports delay the replicas
                replica.record("stderr", f"{replica.error}\n".encode())
            except OSError:
                pass  # the error is in the state all the same
            replica.pid = None
            replica.exit_code = 127
            self.exited.append(replica)
            return
        finally:
            os.close(w_out)
            os.close(w_err)
        replica.state = "RUNNING"
        replica.start_token, replica.token_read = None, False
        # The watchdog reads the start token itself (``Watchdog.start_of``), off this loop.
        self.tell_watchdog(f"+{replica.pid}\n".encode())
        self.by_pid[replica.pid] = replica
        for fd, stream in ((r_out, "stdout"), (r_err, "stderr")):
            os.set_blocking(fd, False)
            self.poller.register(fd, select.POLLIN)
            self.watched[fd] = (replica, stream)
            replica.pipes[fd] = stream
        self.dirty = True

    def _start(self, argv: list[str], cwd: str, env: dict[str, str], out: int, err: int) -> int:
        """Start one process in its own process group with the given output fds; its pid."""
        if not hasattr(os, "posix_spawn"):
            import subprocess

            return subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=self.devnull,
                stdout=out,
                stderr=err,
                start_new_session=True,
            ).pid
        path = env.get("PATH", os.defpath)
        if self.programs is None:
            exe = which(argv[0], path, cwd)
        else:
            exe = self.programs.get((argv[0], path, cwd)) or which(argv[0], path, cwd)
            self.programs[argv[0], path, cwd] = exe
        # posix_spawn has no working-directory action; the child inherits ours.
        if self.cwd != cwd:
            os.chdir(cwd)
            self.cwd = cwd
        actions = [
            (os.POSIX_SPAWN_DUP2, self.devnull, 0),
            (os.POSIX_SPAWN_DUP2, out, 1),
            (os.POSIX_SPAWN_DUP2, err, 2),
        ]
        # Python ignores SIGPIPE and SIGXFSZ; ignored signals survive exec, so reset them.
        return os.posix_spawn(
            exe,
            argv,
            env,
            file_actions=actions,
            # a group of its own (a new session costs twice as much to spawn; the
            # supervisor's own session already keeps terminals away)
            setpgroup=0,
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )

    # -- policy -----------------------------------------------------------------------

    def handle_exit(self, replica: Replica) -> None:
        requeue = asked_requeue(self.meta, replica)
        if requeue and on_requeue_exit(self, replica.role, replica.id):
            return  # run again, without spending a retry
        replica.set_final_state()
        if replica.state != "FAILED" or requeue:
            return  # a requeue past the cap fails for good: on_requeue_exit said why
        role = self.roles[replica.role]
        if self.role_restarts[replica.role] < int(role["max_retries"]):
            self.role_restarts[replica.role] += 1
            self.num_restarts += 1
            policy = role["retry_policy"]
            if policy == "REPLICA":
                targets = [replica]
            elif policy == "ROLE":
                targets = [r for r in self.replicas if r.role == replica.role]
            else:
                targets = list(self.replicas)
            terminate(self, [r for r in targets if r is not replica])
            # What ended attempts left in their groups (a server holding a port, a
            # loader holding a file) must not meet the new attempt.
            end_groups(self, {r.pid for r in targets if r.pid is not None})
            for r in targets:
                # an end caused by this restart is not a failure of its own
                if r is not replica and r in self.exited:
                    self.exited.remove(r)
            code = replica.exit_code
            why = f"{replica.role}/{replica.id} exited with code {code}{signal_name(code)}"
            for r in targets:
                self.spawn(r, why)
            return
        code = replica.exit_code
        self.state = "FAILED"
        self.msg = (
            f"role {replica.role!r} replica {replica.id} exited with code {code}"
            f"{signal_name(code)}"
            + (f" after {self.role_restarts[replica.role]} restart(s)" if self.num_restarts else "")
        )
        self.error = self.msg + (
            "; last lines of its stderr:\n" + replica.error if replica.error else ""
        )

    def take_markers_before_start(self) -> None:
        """What was asked while the app was PENDING (no pid on disk to signal): a cancel
        starts nothing; a requeue is taken here, so the replicas start once rather than
        being started, warned and started again. It is counted as the preemption it
        stands for, which is what the requester waits to see."""
        if os.path.exists(os.path.join(self.meta, CANCEL_FILE)):
            self.cancel_requested = True
        elif take_requeue_marker(self.meta):
            self.num_preemptions += 1

    def run(self) -> int:
        self.install()
        # The state the scheduler wrote (PENDING) counts as written now: the replicas'
        # start is recorded as any change is, within STATE_WRITE_INTERVAL, so an app that
        # ends sooner (a short trial of a sweep) is written once, with its end.
        self.last_write = time.monotonic()
        self.take_markers_before_start()
        if not self.cancel_requested:
            for r in self.replicas:
                self.spawn(r)
                # Replicas that ended already are reaped and their pipes closed now: each
                # spawn copies every open descriptor into its child (and the exec closes
                # them there), so what the ended ones held would slow every later spawn.
                self.reap()
                if self.cancel_requested:
                    break
            self.programs = None
            self.state = "RUNNING"
        collect_from_now_on()  # the replicas are started
        self.watch_children()
        self.reap()  # replicas that already ended need no start token in the state
        while True:
            if not self.cancel_requested:
                while self.exited and self.state != "FAILED":
                    self.handle_exit(self.exited.pop(0))
            if self.log_error and self.state != "FAILED":
                self.state = "FAILED"
                self.msg = self.error = self.log_error
            if self.cancel_requested or self.state == "FAILED":
                break
            if self.requeue_requested:
                self.requeue_requested = False
                requeue_app(self, f"requeued (preemption {self.num_preemptions + 1})")
                continue
            if all(r.state == "SUCCEEDED" for r in self.replicas):
                self.state = "SUCCEEDED"
                break
            self.write_state()
            if self.cancel_requested or self.requeue_requested:
                continue  # seen right after the pid was first recorded (``write_state``)
            timeout = None
            if self.dirty:
                timeout = max(0.0, STATE_WRITE_INTERVAL - (time.monotonic() - self.last_write))
            self.wait_events(timeout)
            self.housekeeping()
        if self.vanished:
            self.state = "FAILED"
            self.msg = f"{self.app_dir} was deleted while the app ran; its replicas were stopped"
        elif self.cancel_requested and self.state != "FAILED":
            self.state = "CANCELLED"
            self.msg = "cancelled"
        kill_leftovers(self)
        self.cancel_unended()
        self.finish()
        return 0

    def emergency_stop(self, error: BaseException) -> None:
        """The supervisor failed: kill every replica group at once, then record why."""
        for r in self.replicas:
            if r.pid is not None and r.pid in self.by_pid:
                signal_quietly(r.pid, signal.SIGKILL, group=True)
                r.state = "FAILED"
        for r in self.exited:  # ended (reaped while the replicas started), not yet judged
            r.set_final_state()
        self.cancel_unended()  # those never started will not start now
        self.state = "FAILED"
        self.msg = self.error = (
            f"the app's supervisor failed ({type(error).__name__}: {error}); its replicas "
            f"were stopped{supervisor_log_hint(self.meta)}"
        )
        self.ended_at = time.time()
        self.record_end()

    def cancel_unended(self) -> None:
        """The app has ended: a replica not yet started, or not yet judged, never will be."""
        for r in self.replicas:
            if r.state in ("PENDING", "RUNNING"):
                r.state = "CANCELLED"

    def finish(self) -> None:
        for r in self.replicas:
            self._drain(r)
            for fd in list(r.pipes):
                self._unwatch(fd, r)
            r.close_logs()
        self.ended_at = time.time()
        # the marker first, so that whoever sees the app ended also finds it
        self.write_closed_marker()
        self.record_end()
        # Every replica is reaped and the end recorded: the watchdog has nothing to do.
        self.tell_watchdog(GUARD_DONE)

    def close(self) -> None:
        """Leave the process as the next app's supervisor expects it (shared): no wakeup
        fd, SIGCHLD at its default. What it holds for every app stays open
        (``this_process``)."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)

    def write_closed_marker(self) -> None:
        """0.7's ``SUCCESS`` file in the app directory (written whatever the outcome, as
        there): the replicas' output files are closed and complete, for tools that wait
        on it before reading them. Best effort: ``record_end`` keeps the outcome."""
        if self.vanished:
            return
        roles: dict[str, list[dict[str, Any]]] = {}
        # ``r.dir`` ends with the replica's number, never a separator: joined by hand, as
        # os.path.join would, at a fraction of its cost (twice per replica, as the app ends).
        out, err = os.sep + STREAM_FILES["stdout"], os.sep + STREAM_FILES["stderr"]
        for r in self.replicas:
            roles.setdefault(r.role, []).append(
                {
                    "replica_id": r.id,
                    "pid": r.pid,
                    "exitcode": r.exit_code,
                    "stdout": r.dir + out,
                    "stderr": r.dir + err,
                    "error_file": "<N/A>",
                }
            )
        marker = {
            "app_id": self.app_id,
            "log_dir": self.app_dir,
            "final_state": self.state,
            "last_updated": self.ended_at,
            "roles": roles,
        }
        try:  # noqa: SIM105 -- contextlib stays unimported: imports delay the replicas
            write_atomic(os.path.join(self.app_dir, CLOSED_MARKER), marker)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    """Supervise the app named by ``argv``."""
    if len(argv) == 3 and argv[2] == GO_ON_STDIN:
        if not told_to_go():
            return 0  # the submission failed: there is nothing to run
    elif len(argv) != 2:
        print(f"usage: {argv[0]} APP_DIR [{GO_ON_STDIN}]", file=sys.stderr)
        return 2
    app_dir = argv[1]
    # The watchdog is forked before the request is read: what is allocated from then on
    # is this process's alone, not shared copy-on-write with the watchdog (starting the
    # replicas touches, and would so copy, every page of the request).
    guard_pid, guard_w = fork_watchdog(os.path.join(app_dir, META_DIR))
    try:
        supervisor = Supervisor(app_dir, guard_w, guard_pid=guard_pid)
    except BaseException:
        if guard_w is not None:
            os.write(guard_w, GUARD_DONE)  # no replica was started: nothing to stop
        raise
    return supervise(supervisor)


def fork_watchdog(meta: str) -> tuple[int, int] | tuple[None, None]:
    """Fork the watchdog that stops every replica group should this process die, for the
    app whose meta directory is ``meta``; its pid and the pipe to tell it the groups.

    Forked before any signal handler is set; replicas are then spawned the fast way
    (posix_spawn) and the watchdog is told each new group over the pipe.
    """
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return None, None  # no watchdog: torchx status/cancel still kill the recorded groups
    if pid == 0:
        os.close(w)
        collect_from_now_on()
        code = 0
        try:
            Watchdog(r, meta, os.getppid()).run()
        except BaseException:
            code = 1
        os._exit(code)
    os.close(r)
    # Its own process group before anything else can happen (see ``Watchdog``): the
    # parent sets it too, so no kill of our group can come before the child's own call.
    try:  # noqa: SIM105 -- contextlib stays unimported: imports delay the replicas
        os.setpgid(pid, pid)
    except OSError:
        pass  # it did so already
    return pid, w


def supervise(supervisor: Supervisor) -> int:
    """Run ``supervisor`` to the end of its app; 1 if it failed (its replicas are then
    stopped and the failure recorded, as far as that can be done)."""
    try:
        return supervisor.run()
    except BaseException as e:
        import traceback

        try:  # into supervisor.log, which a full disk may refuse: the hint then says nothing
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:
            pass
        try:
            supervisor.emergency_stop(e)
        except BaseException:
            try:  # noqa: SIM105 -- as above
                traceback.print_exc()
            except BaseException:
                pass
        return 1
