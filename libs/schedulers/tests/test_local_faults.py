"""local_cwd under faults: a killed or failing supervisor, bad options, unwritable logs,
corrupt state, a deleted app directory. Nothing is orphaned and nothing is claimed that
did not happen. Every process a test starts is killed by its pid at the end."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from torchx_test_fixtures_processes import alive

from torchx.schedulers import Stream
from torchx.schedulers.local_scheduler import AppStateError, LocalScheduler
from torchx.specs import AppDef, AppState, Role, SpecsError

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc (Linux)")


def gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.02)
    return not any(alive(p) for p in pids)


class Pids:
    """Every pid a test learns of; all are SIGKILLed (by pid) when the test ends."""

    def __init__(self) -> None:
        self.pids: set[int] = set()

    def add(self, *pids: int | None) -> None:
        self.pids.update(p for p in pids if p)

    def kill_all(self) -> None:
        for pid in self.pids:
            if alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def pids() -> Iterator[Pids]:
    p = Pids()
    yield p
    p.kill_all()


def sh(name: str, script: str, replicas: int = 1) -> Role:
    return Role(name, image="", entrypoint="bash", args=["-c", script], num_replicas=replicas)


def run(s: LocalScheduler, app: AppDef, **cfg: Any) -> str:
    return s.schedule(s.submit_dryrun(app, cfg))


def app_dir(s: LocalScheduler, app_id: str) -> Path:
    found = s._app_dir(app_id)
    assert found is not None
    return Path(found)


def state_of(s: LocalScheduler, app_id: str) -> dict[str, Any]:
    data = json.loads((app_dir(s, app_id) / ".torchx" / "state.json").read_text())
    assert isinstance(data, dict)
    return data


def running_pids(s: LocalScheduler, app_id: str, n: int, pids: Pids) -> tuple[int, list[int]]:
    """Wait until ``n`` replicas run; (supervisor pid, replica pids), all tracked."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        st = state_of(s, app_id)
        reps = [r["pid"] for r in st.get("replicas", []) if r.get("state") == "RUNNING"]
        pids.add(st.get("supervisor_pid"), *reps)
        if len(reps) == n and all(r.get("pgid") for r in st["replicas"]):
            return int(st["supervisor_pid"]), reps
        time.sleep(0.02)
    raise AssertionError(f"replicas did not start: {state_of(s, app_id)}")


def watchdog_of(supervisor: int) -> list[int]:
    with open(f"/proc/{supervisor}/task/{supervisor}/children") as f:
        return [int(p) for p in f.read().split()]


def test_state_is_versioned_json_any_python_reads(scheduler: LocalScheduler) -> None:
    app_id = run(scheduler, AppDef("js", [sh("w", "true")]))
    assert scheduler.wait(app_id) is not None
    meta = app_dir(scheduler, app_id) / ".torchx"
    assert sorted(p.name for p in meta.iterdir() if p.suffix == ".json") == [
        "request.json",
        "state.json",
    ]
    assert not list(meta.glob("*.marshal"))
    for name in ("request.json", "state.json"):
        data = json.loads((meta / name).read_text())
        assert data["version"] == 1
    assert json.loads((meta / "state.json").read_text())["state"] == "SUCCEEDED"


def test_kill_9_of_the_supervisor_stops_replicas_and_status_says_so(
    scheduler: LocalScheduler, pids: Pids
) -> None:
    app_id = run(scheduler, AppDef("k9", [sh("a", "sleep 300", replicas=2), sh("b", "sleep 300")]))
    supervisor, replicas = running_pids(scheduler, app_id, 3, pids)
    os.kill(supervisor, signal.SIGKILL)
    assert gone_within(replicas, 60), "replicas outlived their supervisor"
    desc = scheduler.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.FAILED
    assert "supervisor" in desc.msg and str(supervisor) in desc.msg
    states = {r.state for rs in desc.roles_statuses for r in rs.replicas}
    assert states == {AppState.FAILED}
    # cancel of an app that already ended does nothing and says nothing false
    scheduler.cancel(app_id)
    assert scheduler.describe(app_id).state == AppState.FAILED  # type: ignore[union-attr]


def test_supervisor_and_watchdog_killed_then_status_kills_the_recorded_groups(
    scheduler: LocalScheduler, pids: Pids, state_dir: Path
) -> None:
    # the replica starts a grandchild in its own group: only the recorded group reaches it
    app_id = run(scheduler, AppDef("kk", [sh("w", "sleep 301 & sleep 302; wait")]))
    supervisor, (replica,) = running_pids(scheduler, app_id, 1, pids)
    guards = watchdog_of(supervisor)
    pids.add(*guards)
    for pid in guards:
        if pid != replica:
            os.kill(pid, signal.SIGKILL)
    os.kill(supervisor, signal.SIGKILL)
    time.sleep(0.1)
    members = [int(p) for p in os.listdir("/proc") if p.isdigit() and _pgid(int(p)) == replica]
    pids.add(*members)
    assert members, "the replica group should still live: nothing stopped it yet"
    # another torchx process looks at the app
    code = (
        "from torchx.schedulers.local_scheduler import LocalScheduler;"
        f"d = LocalScheduler('o', state_dir={str(state_dir)!r}).describe({app_id!r});"
        "print(d.state.name); print(d.msg)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    state, msg = out.stdout.splitlines()[:2]
    assert state == "FAILED"
    assert f"[{replica}]" in msg and "killed" in msg
    assert gone_within(members, 60)
    assert state_of(scheduler, app_id)["state"] == "FAILED"  # recorded once, on disk


def _pgid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return int(data[data.rindex(b")") + 2 :].split()[2])


@pytest.mark.parametrize("grace", [math.nan, math.inf, -math.inf, 1e308, -1.0])
def test_grace_the_supervisor_cannot_honour_is_refused_at_submit(
    scheduler: LocalScheduler, grace: float
) -> None:
    with pytest.raises(SpecsError, match="cancel_grace_seconds"):
        scheduler.submit_dryrun(AppDef("g", [sh("w", "true")]), {"cancel_grace_seconds": grace})


def test_grace_from_the_command_line_nan_is_refused() -> None:
    from torchx.schedulers.local_scheduler import LocalScheduler as S

    cfg = S("x").run_opts().cfg_from_str("cancel_grace_seconds=nan")
    with pytest.raises(SpecsError, match="finite"):
        S("x").submit_dryrun(AppDef("g", [sh("w", "true")]), cfg)


@pytest.mark.parametrize(
    "bad",
    [
        {"env": {"A": "x\0y"}},
        {"env": {"": "1"}},
        {"env": {"A=B": "1"}},
        {"args": ["-c", "true", "x\0y"]},
    ],
)
def test_a_replica_that_cannot_start_fails_the_app_and_stops_the_others(
    scheduler: LocalScheduler, pids: Pids, bad: dict[str, Any], tmp_path: Path
) -> None:
    # What specs refuse (see torchx.specs validate_app) may still reach a request built by
    # hand: the supervisor must survive it and stop the first role's replicas.
    started = tmp_path / "started"
    first = sh("first", f"echo $BASHPID > {started}.$TORCHX_REPLICA_ID; exec sleep 300", replicas=2)
    second = Role("second", image="", entrypoint="bash", args=["-c", "true"])
    info = scheduler.submit_dryrun(AppDef("ns", [first, second]), {})
    last = info.request.replicas[-1]
    last.env.update(bad.get("env", {}))
    last.argv = ["bash", *bad.get("args", last.argv[1:])]
    app_id = scheduler.schedule(info)
    desc = scheduler.wait(app_id, timeout=120)
    firsts = [int(p.read_text()) for p in tmp_path.glob("started.*") if p.read_text().strip()]
    pids.add(*firsts)
    assert desc is not None and desc.state == AppState.FAILED, desc
    assert "second" in desc.msg
    assert gone_within(firsts, 60)
    (rep,) = desc.roles_statuses[1].replicas
    assert rep.exit_code == 127
    assert "cannot start" in rep.structured_error_msg


def test_a_failing_log_write_fails_the_app_names_the_file_and_orphans_nothing(
    state_dir: Path, pids: Pids, tmp_path: Path
) -> None:
    # 64 KiB of file size allowed to the launcher and so to the supervisor it starts.
    launcher = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
        from torchx.schedulers.local_scheduler import LocalScheduler
        from torchx.specs import AppDef, Role
        s = LocalScheduler("x", state_dir={str(state_dir)!r})
        script = "echo $BASHPID > {tmp_path}/pid; head -c 1000000 /dev/zero; sleep 300"
        big = Role("big", image="", entrypoint="bash", args=["-c", script])
        other = Role("other", image="", entrypoint="bash",
                     args=["-c", "echo $BASHPID > {tmp_path}/pid2; exec sleep 300"])
        app_id = s.submit(AppDef("fsz", [big, other]))
        d = s.wait(app_id, timeout=60)
        print(d.state.name)
        print(d.msg)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", launcher], capture_output=True, text=True, timeout=120
    )
    for name in ("pid", "pid2"):
        if (tmp_path / name).exists():
            pids.add(int((tmp_path / name).read_text()))
    assert out.returncode == 0, out.stderr
    state, msg = out.stdout.splitlines()[:2]
    assert state == "FAILED"
    assert "cannot write" in msg and "big/0" in msg and "File too large" in msg
    assert os.sep + "stdout.log" in msg or os.sep + "combined.log" in msg
    assert gone_within(list(pids.pids), 60)


def test_replica_exit_codes_are_kept_when_the_launcher_ignores_sigchld(state_dir: Path) -> None:
    # An ignored SIGCHLD survives exec: the supervisor must not inherit it, or the kernel
    # reaps the replicas itself and their exit codes are lost.
    launcher = textwrap.dedent(
        f"""
        import signal
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        from torchx.schedulers.local_scheduler import LocalScheduler
        from torchx.specs import AppDef, Role
        s = LocalScheduler("x", state_dir={str(state_dir)!r})
        roles = [Role(n, image="", entrypoint="bash", args=["-c", f"exit {{c}}"])
                 for n, c in (("ok", 0), ("bad", 3))]
        d = s.wait(s.submit(AppDef("ign", roles)), timeout=60)
        print(d.state.name)
        print([r.replicas[0].exit_code for r in d.roles_statuses])
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", launcher], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:2] == ["FAILED", "[0, 3]"], out.stdout


def test_one_corrupt_app_is_its_own_problem(scheduler: LocalScheduler) -> None:
    good = run(scheduler, AppDef("good", [sh("w", "echo ok")]))
    bad = run(scheduler, AppDef("bad", [sh("w", "echo ok")]))
    assert scheduler.wait(good) is not None and scheduler.wait(bad) is not None
    state_file = app_dir(scheduler, bad) / ".torchx" / "state.json"
    whole = state_file.read_bytes()
    state_file.write_bytes(whole[:7])
    listed = {a.app_id: a for a in scheduler.list()}
    assert listed[good].state == AppState.SUCCEEDED
    assert listed[bad].state == AppState.UNKNOWN
    assert str(state_file) in listed[bad].name
    for action in (
        lambda: scheduler.describe(bad),
        lambda: scheduler.cancel(bad),
        lambda: list(scheduler.log_iter(bad, "w")),
    ):
        with pytest.raises(AppStateError) as e:
            action()
        assert str(state_file) in str(e.value)
    # nothing else of the app was touched
    assert (app_dir(scheduler, bad) / "w" / "0" / "stdout.log").read_text() == "ok\n"
    state_file.write_bytes(whole)  # the fixture's clean-up reads every app


def test_a_state_file_of_another_version_is_named(scheduler: LocalScheduler) -> None:
    app_id = run(scheduler, AppDef("v", [sh("w", "true")]))
    assert scheduler.wait(app_id) is not None
    path = app_dir(scheduler, app_id) / ".torchx" / "state.json"
    path.write_text(json.dumps({"version": 99, "state": "RUNNING"}))
    with pytest.raises(AppStateError, match="version 99"):
        scheduler.describe(app_id)
    path.write_text(json.dumps({"version": 1, "state": "SUCCEEDED"}))


def test_a_deleted_app_directory_stops_the_app(scheduler: LocalScheduler, pids: Pids) -> None:
    app_id = run(scheduler, AppDef("del", [sh("w", "sleep 300", replicas=2)]))
    supervisor, replicas = running_pids(scheduler, app_id, 2, pids)
    shutil.rmtree(app_dir(scheduler, app_id))
    assert gone_within([*replicas, supervisor], 60), "the app outlived its directory"
    assert scheduler.describe(app_id) is None


HOLD_PORT = """
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
with open(os.path.join(sys.argv[2], "holder"), "w") as f:
    f.write(str(os.getpid()))
time.sleep(300)
"""

BIND_OR_LEAVE_A_HOLDER = """
import os, socket, subprocess, sys, time
port, d = sys.argv[1], sys.argv[2]
if not os.path.exists(os.path.join(d, "attempt1")):
    open(os.path.join(d, "attempt1"), "w").close()
    # the failed attempt leaves a child in its process group, holding the port
    subprocess.Popen([sys.executable, os.path.join(d, "hold.py"), port, d])
    while not os.path.exists(os.path.join(d, "holder")):
        time.sleep(0.01)
    sys.exit(1)
s = socket.socket()
s.bind(("127.0.0.1", int(port)))
s.listen()
print("bound", port)
"""


def test_a_retry_first_ends_the_failed_attempts_group_so_its_port_is_free(
    scheduler: LocalScheduler, pids: Pids, tmp_path: Path
) -> None:
    (tmp_path / "hold.py").write_text(HOLD_PORT)
    (tmp_path / "attempt.py").write_text(BIND_OR_LEAVE_A_HOLDER)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    role = Role(
        "trainer",
        image="",
        entrypoint=sys.executable,
        args=[str(tmp_path / "attempt.py"), str(port), str(tmp_path)],
        max_retries=1,
    )
    app_id = run(scheduler, AppDef("port", [role]), cancel_grace_seconds=2)
    desc = scheduler.wait(app_id, timeout=60)
    holder = tmp_path / "holder"
    if holder.exists():
        pids.add(int(holder.read_text()))
    assert desc is not None, app_id
    assert desc.state == AppState.SUCCEEDED, desc.structured_error_msg
    assert desc.num_restarts == 1
    assert list(scheduler.log_iter(app_id, "trainer", streams=Stream.STDOUT)) == [f"bound {port}\n"]
    assert not alive(int(holder.read_text()))


def test_kill_9_of_the_supervisors_whole_group_still_stops_the_replicas(
    scheduler: LocalScheduler, pids: Pids
) -> None:
    app_id = run(scheduler, AppDef("grp", [sh("a", "sleep 300", replicas=2)]))
    supervisor, replicas = running_pids(scheduler, app_id, 2, pids)
    pids.add(*watchdog_of(supervisor))
    os.killpg(os.getpgid(supervisor), signal.SIGKILL)  # `kill -9 -PGID`
    # nothing but the app's own processes acts here: no status, no cancel
    assert gone_within(replicas, 60), "replicas outlived a group kill of their supervisor"
    deadline = time.monotonic() + 60
    while state_of(scheduler, app_id)["state"] != "FAILED" and time.monotonic() < deadline:
        time.sleep(0.02)
    st = state_of(scheduler, app_id)
    assert st["state"] == "FAILED"
    # what is known, no guessed cause, no pointer to a supervisor.log that holds nothing
    assert str(supervisor) in st["msg"] and "?" not in st["msg"]
    assert "supervisor.log" not in st["msg"]


def test_a_groups_watch_reads_start_tokens_late_and_none_for_an_ended_app(tmp_path: Path) -> None:
    """A group keeps each app's watch itself: it reads a replica's start token only once
    ``READ_PAUSE_S`` passed since it was told of it (not while the replica is being
    exec'd), never for an app whose end came first, and before it kills anything."""
    from torchx.schedulers._local_group import AppWatch
    from torchx.schedulers._local_processes import process_start_token
    from torchx.schedulers._local_state_files import read_data
    from torchx.schedulers._local_watchdog import READ_PAUSE_S

    replica = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        token = process_start_token(replica.pid)
        assert token is not None
        # this process plays the worker: its children are its replicas
        watch = AppWatch(-1, str(tmp_path), os.getpid())
        told = time.monotonic()
        assert not watch.feed(f"+{replica.pid}\n".encode())
        assert watch.groups == []
        due = watch.settle(told)
        assert due is not None and due >= told + READ_PAUSE_S and watch.groups == []
        assert watch.settle(due) is None
        assert watch.groups == [{"pgid": replica.pid, "start": token}]

        ended = AppWatch(-1, str(tmp_path), os.getpid())
        assert ended.feed(f"+{replica.pid}\ndone\n".encode())
        assert ended.groups == []  # its app ended before the pause: no token was read

        # The worker died right after it told of the replica: its group is killed all the
        # same, its token read first, and the app recorded FAILED.
        orphaned = AppWatch(-1, str(tmp_path), os.getpid())
        orphaned.feed(f"+{replica.pid}\n".encode())
        orphaned.stop_all()
        assert replica.wait(timeout=60) == -signal.SIGKILL
        assert orphaned.groups == [{"pgid": replica.pid, "start": token}]
        assert read_data(str(tmp_path / "state.json"))["state"] == "FAILED"
    finally:
        replica.kill()
        replica.wait()


def test_watchdog_reads_each_replicas_start_token_and_marks_ended_ones(tmp_path: Path) -> None:
    """The supervisor tells its watchdog only the pid; the watchdog reads the start token,
    and records a replica that stopped running (or a pid that is now someone else's) so
    that no other process is ever killed under its number."""
    from torchx.schedulers._local_processes import process_start_token
    from torchx.schedulers._local_watchdog import ENDED, Watchdog

    running = subprocess.Popen(["sleep", "60"])
    ended = subprocess.Popen(["true"])
    try:
        # this process plays the supervisor: its children are its replicas
        as_supervisor = Watchdog(-1, str(tmp_path), os.getpid())
        token = process_start_token(running.pid)
        assert token is not None and as_supervisor.start_of(running.pid) == token
        deadline = time.monotonic() + 60
        while process_start_token(ended.pid) is not None and time.monotonic() < deadline:
            time.sleep(0.01)  # a zombie once it exited, until reaped below
        assert as_supervisor.start_of(ended.pid) == ENDED
        ended.wait()
        assert as_supervisor.start_of(ended.pid) == ENDED  # reaped: no such process
        # Seen by a watchdog whose supervisor (its parent) lives, a process with another
        # parent is not a replica: it reused the number.
        other = Watchdog(-1, str(tmp_path), os.getppid())
        assert other.start_of(running.pid) == ENDED
    finally:
        running.kill()
        running.wait()


def test_a_submission_failing_after_its_supervisor_started_leaves_no_process_nor_files(
    scheduler: LocalScheduler, state_dir: Path
) -> None:
    """The supervisor starts while the app's files are written; when one cannot be (here
    the app's index entry is taken), it is called off: it exits, and nothing is kept."""
    from torchx.schedulers import SchedulerError

    info = scheduler.submit_dryrun(AppDef("off", [sh("w", "true")]), {})
    index = state_dir / "local_cwd" / "apps"
    index.mkdir(parents=True, exist_ok=True)
    (index / info.request.app_id).write_text("taken")
    with pytest.raises(SchedulerError, match="cannot start app"):
        scheduler.schedule(info)
    assert not os.path.exists(info.request.app_dir)
    assert (index / info.request.app_id).read_text() == "taken"  # not ours: left alone
    running = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if (
                entry.isdigit()
                and info.request.app_dir.encode() in Path(f"/proc/{entry}/cmdline").read_bytes()
            ):
                running.append(int(entry))
    assert running == []  # the supervisor was waited for
