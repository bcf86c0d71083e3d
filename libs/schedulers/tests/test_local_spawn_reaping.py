"""While a local app's replicas are being started, those that ended already are reaped and
their pipes closed: each later spawn copies fewer descriptors into its child. Should the
supervisor fail before all are started, those reaped ones still get their final state."""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

from torchx.schedulers._local_processes import process_parent_and_start
from torchx.schedulers._local_replica import Replica
from torchx.schedulers._local_supervisor import Supervisor, supervise
from torchx.schedulers.local_scheduler import LocalScheduler
from torchx.specs import AppDef, AppState, Role

from .forked import in_child


def _until_ended(pid: int) -> None:
    """Wait (a generous deadline, no fixed sleep) until ``pid`` is a zombie: it has exited."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = process_parent_and_start(pid)
        if found is None or found[1] is None:
            return
        time.sleep(0.005)
    raise AssertionError(f"replica {pid} did not end within 60 s")


def _run_counting_pipes(app_dir: str, report: int) -> None:
    """In a forked child: supervise the app; before each spawn wait until the replica
    started before it has ended, and note how many pipes the supervisor then watches."""
    r, w = os.pipe()
    os.close(r)  # no watchdog here: a closed pipe is one the supervisor stops telling
    sup = Supervisor(app_dir, w, shared=True)
    seen: list[int] = []
    spawn = sup.spawn

    def counting_spawn(replica: Replica, why: str = "") -> None:
        k = sup.replicas.index(replica)
        before = sup.replicas[k - 1].pid if k > 0 else None
        if before is not None:
            _until_ended(before)
        seen.append(len(sup.watched))
        spawn(replica, why)

    sup.spawn = counting_spawn  # type: ignore[method-assign]
    sup.run()
    os.write(report, json.dumps(seen).encode())


def test_replicas_that_ended_are_reaped_before_the_next_spawn(tmp_path: Path) -> None:
    scheduler = LocalScheduler("test", state_dir=tmp_path / "state")
    role = Role("r", image="", entrypoint="true", num_replicas=4)
    info = scheduler.submit_dryrun(AppDef("reap", [role]), {"log_dir": str(tmp_path / "logs")})
    req = info.request
    scheduler._write_app_files(req, scheduler._make_app_dir(req))
    report = in_child(req.app_dir, _run_counting_pipes)
    # When a replica starts, at most the two pipes of the one just before it are watched
    # (if it had not ended yet when it was started); those of all the earlier ones were
    # closed when they were reaped, right after a later spawn. Without that: 0, 2, 4, 6.
    seen = json.loads(report)
    assert len(seen) == 4 and seen[0] == 0 and all(n <= 2 for n in seen), seen
    desc = scheduler.describe(req.app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert [r.exit_code for r in desc.roles_statuses[0].replicas] == [0, 0, 0, 0]


def _run_out_of_descriptors(app_dir: str, report: int) -> None:
    """In a forked child: supervise the app of 4 replicas; the first two end (and are
    reaped) before the third starts; the fourth's spawn meets a real EMFILE (the limit
    on open descriptors lowered to those open), as a supervisor out of them would."""
    r, w = os.pipe()
    os.close(r)
    sup = Supervisor(app_dir, w, shared=True)
    spawn = sup.spawn
    seen: dict[str, object] = {}

    def spawn_until_out_of_descriptors(replica: Replica, why: str = "") -> None:
        k = sup.replicas.index(replica)
        if k == 2:
            for earlier in sup.replicas[:2]:
                assert earlier.pid is not None
                _until_ended(earlier.pid)
        if k != 3:
            spawn(replica, why)
            return
        seen["reaped"] = [f"{x.role}/{x.id}" for x in sup.exited]
        lowest_free = os.dup(report)  # every descriptor below it is open
        os.close(lowest_free)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free, hard))
        try:
            spawn(replica, why)
        finally:  # the failure is recorded with descriptors to spare
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    sup.spawn = spawn_until_out_of_descriptors  # type: ignore[method-assign]
    seen["code"] = supervise(sup)
    os.write(report, json.dumps(seen).encode())


def test_replicas_reaped_before_the_supervisor_failed_get_their_final_state(
    tmp_path: Path,
) -> None:
    scheduler = LocalScheduler("test", state_dir=tmp_path / "state")
    roles = [
        Role("ok", image="", entrypoint="true"),
        Role("bad", image="", entrypoint="false"),
        Role("long", image="", entrypoint="sleep", args=["60"], num_replicas=2),
    ]
    info = scheduler.submit_dryrun(AppDef("crash", roles), {"log_dir": str(tmp_path / "logs")})
    req = info.request
    scheduler._write_app_files(req, scheduler._make_app_dir(req))
    seen = json.loads(in_child(req.app_dir, _run_out_of_descriptors))
    # the case at hand: both had been reaped (out of the running ones) when it failed
    assert sorted(seen["reaped"]) == ["bad/0", "ok/0"] and seen["code"] == 1, seen
    desc = scheduler.describe(req.app_id)
    assert desc is not None and desc.state == AppState.FAILED
    assert "Errno 24" in desc.msg, desc.msg
    states = {
        (rs.role, x.id): (x.state, x.exit_code) for rs in desc.roles_statuses for x in rs.replicas
    }
    # ended on their own: as they ended (not RUNNING); the one still running was stopped
    assert states[("ok", 0)] == (AppState.SUCCEEDED, 0)
    assert states[("bad", 0)] == (AppState.FAILED, 1)
    assert states[("long", 0)][0] == AppState.FAILED
    # never started (its spawn failed): it never will, so not PENDING in an ended app
    assert states[("long", 1)] == (AppState.CANCELLED, None), states
