"""One process supervising app after app (a group's worker) keeps what belongs to the
process for all of them, and looks up each app's working directory afresh."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from torchx.schedulers._local_supervisor import Supervisor, supervise
from torchx.schedulers.local_scheduler import LocalScheduler
from torchx.specs import AppDef, AppState, Role

from .forked import in_child


def _app(scheduler: LocalScheduler, tmp_path: Path, name: str, cwd: Path) -> str:
    role = Role("r", image="", entrypoint="touch", args=[name])
    cfg = {"log_dir": str(tmp_path / "logs"), "cwd": str(cwd)}
    req = scheduler.submit_dryrun(AppDef(name, [role]), cfg).request
    scheduler._write_app_files(req, scheduler._make_app_dir(req))
    return req.app_dir


def test_apps_supervised_one_after_another_in_one_process(tmp_path: Path) -> None:
    scheduler = LocalScheduler("test", state_dir=tmp_path / "state")
    work = tmp_path / "work"
    work.mkdir()
    first = _app(scheduler, tmp_path, "first", work)
    second = _app(scheduler, tmp_path, "second", work)

    def one_after_another(_: str, report: int) -> None:
        seen = []
        for app_dir in (first, second):
            guard_r, guard_w = os.pipe()
            sup = Supervisor(app_dir, guard_w, shared=True)
            seen.append([sup.devnull, sup.wake_r])
            assert supervise(sup) == 0
            sup.close()
            os.close(guard_r)
            os.close(guard_w)
            if app_dir == first:
                # the directory the next app names is removed and made again
                shutil.rmtree(work)
                work.mkdir()
        os.write(report, json.dumps(seen).encode())

    seen = json.loads(in_child(first, one_after_another))
    # /dev/null and the wakeup pipe were opened once, for both apps
    assert seen[0] == seen[1]
    for app_dir in (first, second):
        desc = scheduler.describe(os.path.basename(app_dir))
        assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    # the second app ran in the directory made again, not in the removed one its
    # process was left in by the first
    assert sorted(os.listdir(work)) == ["second"]
