"""``LocalScheduler.start_group``: a group's process started before its apps' requests
are made, then given to ``schedule_group`` or called off with nothing done."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from torchx.schedulers import SchedulerError
from torchx.schedulers.local_scheduler import LocalScheduler
from torchx.specs import AppDef, Role, SpecsError


def _app(image: Path) -> AppDef:
    return AppDef("trial", roles=[Role("r", image=str(image), entrypoint="true")])


def test_a_group_started_first_runs_the_apps_it_is_then_given(tmp_path: Path) -> None:
    sched = LocalScheduler("s", state_dir=tmp_path / "state")
    log = tmp_path / "group.log"
    group = sched.start_group(2, "early", str(log), new_log=True)
    infos = sched.submit_dryrun_group([_app(tmp_path), _app(tmp_path)], {})
    assert group.poll() is None  # waits for its apps meanwhile
    assert sched.schedule_group(infos, 2, "early", str(log), group) is group
    for info in infos:
        desc = sched.wait(info.request.app_id, timeout=60)
        assert desc is not None and desc.state.name == "SUCCEEDED"
    assert group.wait(timeout=60) == 0


def test_a_group_called_off_ends_having_touched_nothing(tmp_path: Path) -> None:
    sched = LocalScheduler("s", state_dir=tmp_path / "state")
    log = tmp_path / "group.log"
    group = sched.start_group(1, "off", str(log), new_log=True)
    sched.call_off_group(group)
    assert group.returncode == 0
    assert log.read_bytes() == b""
    assert not (tmp_path / "state" / "local_cwd" / "logs").exists()


def test_a_new_log_must_be_new(tmp_path: Path) -> None:
    log = tmp_path / "group.log"
    log.write_text("kept\n")
    with pytest.raises(FileExistsError):
        LocalScheduler.start_group(1, "again", str(log), new_log=True)
    assert log.read_text() == "kept\n"


def test_a_given_group_is_called_off_when_the_apps_cannot_be_submitted(tmp_path: Path) -> None:
    sched = LocalScheduler("s", state_dir=tmp_path / "state")
    (info,) = sched.submit_dryrun_group([_app(tmp_path)], {})
    app_id = sched.schedule(info)
    group = sched.start_group(1, "again", str(tmp_path / "group.log"))
    with pytest.raises(SpecsError, match="already used"):
        sched.schedule_group([info], 1, "again", str(tmp_path / "group.log"), group)
    assert group.returncode == 0  # ended (and reaped) before the error reached us
    desc = sched.wait(app_id, timeout=60)
    assert desc is not None and desc.state.name == "SUCCEEDED"


def test_a_group_that_ended_before_it_was_told_is_one_line_and_keeps_no_app(
    tmp_path: Path,
) -> None:
    sched = LocalScheduler("s", state_dir=tmp_path / "state")
    group = sched.start_group(1, "gone", str(tmp_path / "group.log"))
    infos = sched.submit_dryrun_group([_app(tmp_path), _app(tmp_path)], {})
    group.kill()
    stat = Path(f"/proc/{group.pid}/stat")
    while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.01)  # until it has ended (not reaped: the write below finds no reader)
    with pytest.raises(SchedulerError, match=r"group gone \(.*\) ended with exit code -9 before"):
        sched.schedule_group(infos, 1, "gone", str(tmp_path / "group.log"), group)
    assert group.returncode == -9
    for info in infos:
        assert sched.describe(info.request.app_id) is None
        assert not Path(info.request.app_dir).exists()
    assert sched.call_off_group(group)  # called off already: at once


def test_a_group_told_its_apps_is_not_called_off(tmp_path: Path) -> None:
    sched = LocalScheduler("s", state_dir=tmp_path / "state")
    go = tmp_path / "go"
    wait = f"while [ ! -e {go} ]; do sleep 0.05; done"
    role = Role("r", image=str(tmp_path), entrypoint="sh", args=["-c", wait])
    app = AppDef("trial", roles=[role])
    (info,) = sched.submit_dryrun_group([app], {})
    group = sched.schedule_group([info], 1, "told", str(tmp_path / "group.log"))
    assert not sched.call_off_group(group)  # returns at once, the app still waiting
    assert group.poll() is None
    go.touch()
    desc = sched.wait(info.request.app_id, timeout=60)
    assert desc is not None and desc.state.name == "SUCCEEDED"
    assert group.wait(timeout=60) == 0
