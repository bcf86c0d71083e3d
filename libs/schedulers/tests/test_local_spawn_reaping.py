"""While a local app's replicas are being started, those that ended already are reaped and
their pipes closed: each later spawn copies fewer descriptors into its child."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from torchx.schedulers._local_processes import process_parent_and_start
from torchx.schedulers._local_replica import Replica
from torchx.schedulers._local_supervisor import Supervisor
from torchx.schedulers.local_scheduler import LocalScheduler
from torchx.specs import AppDef, AppState, Role


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
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child reports through the pipe
        code = 1
        try:
            os.close(r)
            _run_counting_pipes(req.app_dir, w)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        report = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # When a replica starts, at most the two pipes of the one just before it are watched
    # (if it had not ended yet when it was started); those of all the earlier ones were
    # closed when they were reaped, right after a later spawn. Without that: 0, 2, 4, 6.
    seen = json.loads(report)
    assert len(seen) == 4 and seen[0] == 0 and all(n <= 2 for n in seen), seen
    desc = scheduler.describe(req.app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert [r.exit_code for r in desc.roles_statuses[0].replicas] == [0, 0, 0, 0]
