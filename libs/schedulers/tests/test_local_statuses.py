"""``LocalScheduler.statuses``: many apps' statuses at once, each read from its state file
alone, equal to what ``describe(app_id).to_status()`` says of it."""

from __future__ import annotations

import os
import time
from pathlib import Path

from torchx.schedulers.local_scheduler import LocalScheduler
from torchx.specs import AppDef, AppState, Role


def _app(image: Path, script: str, num_replicas: int = 1, max_retries: int = 0) -> AppDef:
    role = Role(
        "r",
        image=str(image),
        entrypoint="sh",
        args=["-c", script],
        num_replicas=num_replicas,
        max_retries=max_retries,
    )
    return AppDef("app", roles=[role])


def test_statuses_equal_each_apps_described_status_without_reading_its_request(
    tmp_path: Path,
) -> None:
    sched = LocalScheduler("s", state_dir=tmp_path / "state")
    apps = [
        _app(tmp_path, "true", num_replicas=2),
        _app(tmp_path, "echo oops >&2; exit 3", max_retries=1),  # fails twice
        _app(tmp_path, "exec sleep 60"),
    ]
    infos = sched.submit_dryrun_group(apps, {})
    group = sched.schedule_group(infos, 0, "statuses-test", str(tmp_path / "group.log"))
    ok, failed, running = (i.request.app_id for i in infos)
    try:
        for app_id in (ok, failed):
            desc = sched.wait(app_id, timeout=120)
            assert desc is not None and desc.state != AppState.RUNNING, desc
        deadline = time.monotonic() + 120
        while (desc := sched.describe(running)) is None or desc.state != AppState.RUNNING:
            assert time.monotonic() < deadline, desc
            time.sleep(0.05)

        got = sched.statuses([ok, failed, running, ok, "no-such-app"])

        assert list(got) == [ok, failed, running, "no-such-app"]  # once each, in order
        assert got["no-such-app"] is None
        for app_id in (ok, failed):
            desc = sched.describe(app_id)
            assert desc is not None
            assert got[app_id] == desc.to_status()
        ok_status, failed_status = got[ok], got[failed]
        assert ok_status is not None and ok_status.state == AppState.SUCCEEDED
        assert [[r.exit_code for r in role.replicas] for role in ok_status.roles] == [[0, 0]]
        assert failed_status is not None and failed_status.state == AppState.FAILED
        assert failed_status.num_restarts == 1 and "exited with code 3" in failed_status.msg
        (replica,) = failed_status.roles[0].replicas
        assert (replica.exit_code, replica.attempt) == (3, 2)
        assert "oops" in replica.structured_error_msg
        running_status = got[running]
        assert running_status is not None and running_status.state == AppState.RUNNING

        # The request is not read: with it gone, the statuses are the same.
        before = {app_id: got[app_id] for app_id in (ok, failed)}
        fresh = LocalScheduler("s", state_dir=tmp_path / "state")  # nothing cached
        for app_id in (ok, failed):
            req = sched.describe(app_id)
            assert req is not None and req.ui_url is not None
            os.unlink(os.path.join(req.ui_url.removeprefix("file://"), ".torchx", "request.json"))
        assert fresh.statuses([ok, failed]) == before
    finally:
        sched.cancel(running)
        group.wait(timeout=120)
