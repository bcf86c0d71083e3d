"""A new local sweep's group process is started before its trials are planned, so its
interpreter starts meanwhile; when planning or submitting fails before the group is told
its trials, it is called off and nothing of the sweep is left: no process, no record, no
log, no app. Once told, the sweep is submitted: an interrupt leaves it running."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

import pytest

from torchx.runner import Sweep, _sweep_processes, _sweeps, get_runner
from torchx.runner._sweep_record import SweepRecord, load, sweeps_dir
from torchx.runner._sweeps import record_of
from torchx.schedulers import SchedulerError, local_scheduler
from torchx.specs import AppState

# Each trial's app, when made, writes down the group processes the planning process has
# started by then (its children running _local_group), one pid a line. Making trial
# ``kill_at``'s app kills them (and waits until they are gone); a trial given ``wait_for``
# runs until that file exists (30 s at most, then fails).
COMPONENT = '''
import os
import shlex
import signal
import time

import torchx.specs as specs

SEEN = {seen!r}


def _groups():
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{{name}}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{{name}}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me and b"_local_group" in cmdline:
            yield name


def _gone(pid):
    try:
        with open(f"/proc/{{pid}}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def step(i: int, fail_at: int = -1, kill_at: int = -1, wait_for: str = "") -> specs.AppDef:
    """One trial; making trial ``fail_at``'s app fails.

    Args:
        i: the trial's number
        fail_at: the trial whose app cannot be made
        kill_at: the trial whose making kills the group
        wait_for: a file the trial waits for
    """
    groups = list(_groups())
    with open(SEEN, "a") as f:
        f.writelines(pid + "\\n" for pid in groups)
    if i == fail_at:
        raise ValueError(f"trial {{i}} cannot be made")
    if i == kill_at:
        for pid in groups:
            os.kill(int(pid), signal.SIGKILL)
        while not all(_gone(pid) for pid in groups):
            time.sleep(0.01)
    if not wait_for:
        return specs.AppDef("step", roles=[specs.Role("s", image=".", entrypoint="true")])
    go = shlex.quote(wait_for)
    wait = f"for n in $(seq 300); do [ -e {{go}} ] && exit 0; sleep 0.1; done; exit 1"
    role = specs.Role("s", image=".", entrypoint="sh", args=["-c", wait])
    return specs.AppDef("step", roles=[role])
'''


@pytest.fixture
def component(tmp_path: Path) -> tuple[str, Path]:
    seen = tmp_path / "seen"
    path = tmp_path / "comp.py"
    path.write_text(COMPONENT.format(seen=str(seen)))
    return f"{path}:step", seen


def _seen(seen: Path) -> set[int]:
    return {int(pid) for pid in seen.read_text().split()} if seen.exists() else set()


def test_the_group_started_while_planning_runs_the_trials(
    component: tuple[str, Path],
) -> None:
    name, seen = component
    with get_runner() as runner:
        handle = runner.run_sweep(Sweep.grid(name, {"i": [0, 1, 2]}, parallel=2), "local_cwd")
        st = runner.wait_sweep(handle, 0.05, timeout=60)
    assert st.state == AppState.SUCCEEDED, st.format()
    # every trial's app was made with the group already started, and that group ran them
    assert _seen(seen) == {record_of(handle).driver_pid}


def test_a_failed_plan_calls_the_group_off_and_leaves_nothing(
    component: tuple[str, Path], tmp_path: Path
) -> None:
    name, seen = component
    sweep = Sweep.grid(name, {"i": [0, 1, 2, 3]}, ["--fail_at=2"], parallel=2)
    with get_runner() as runner, pytest.raises(ValueError, match="trial 2 cannot be made"):
        runner.run_sweep(sweep, "local_cwd")
    groups = _seen(seen)
    assert len(groups) == 1  # started before the trials' apps were made
    (pid,) = groups
    # ended and reaped (not a zombie): its /proc entry is gone
    assert not os.path.exists(f"/proc/{pid}")
    folder = sweeps_dir()
    assert not folder.exists() or list(folder.iterdir()) == []  # no record, no log
    apps = tmp_path / "state" / "torchx" / "local_cwd"
    assert not apps.exists() or [p for p in apps.rglob("*") if p.is_file()] == []


def test_a_dry_run_starts_no_group(component: tuple[str, Path]) -> None:
    name, seen = component
    with get_runner() as runner:
        runner.dryrun_sweep(Sweep.grid(name, {"i": [0, 1]}), "local_cwd")
    assert seen.exists() and _seen(seen) == set()


def _left(tmp_path: Path) -> tuple[list[Path], list[Path]]:
    """What is left of the sweeps: the sweeps folder's files, and the apps' files."""
    folder = sweeps_dir()
    apps = tmp_path / "state" / "torchx" / "local_cwd"
    sweeps = list(folder.iterdir()) if folder.exists() else []
    return sweeps, [p for p in apps.rglob("*") if p.is_file()] if apps.exists() else []


def test_a_record_that_cannot_be_saved_calls_the_group_off_and_leaves_nothing(
    component: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record names the trials before the group is told them: a save that fails then
    (a full disk) leaves nothing, and does not wait for trials that never start."""
    name, seen = component

    def no_room(record: SweepRecord) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", f"{record.sweep_id}.json")

    monkeypatch.setattr(_sweep_processes, "save", no_room)
    sweep = Sweep.grid(name, {"i": [0, 1, 2]}, [f"--wait_for={tmp_path / 'go'}"], parallel=2)
    with get_runner() as runner, pytest.raises(OSError, match="No space left"):
        runner.run_sweep(sweep, "local_cwd")
    (pid,) = _seen(seen)
    assert not os.path.exists(f"/proc/{pid}")  # ended and reaped
    assert _left(tmp_path) == ([], [])


def test_a_group_ended_before_it_is_told_is_one_line_and_leaves_nothing(
    component: tuple[str, Path], tmp_path: Path
) -> None:
    name, seen = component
    sweep = Sweep.grid(name, {"i": [0, 1, 2]}, ["--kill_at=2"], parallel=2)
    with get_runner() as runner, pytest.raises(SchedulerError) as raised:
        runner.run_sweep(sweep, "local_cwd")
    (pid,) = _seen(seen)
    message = str(raised.value)
    assert "\n" not in message
    assert "group sweep-" in message and "ended with exit code -9 before it was told" in message
    assert message.endswith("nothing of them was kept; submit again")
    assert not os.path.exists(f"/proc/{pid}")
    assert _left(tmp_path) == ([], [])


@pytest.mark.parametrize(
    "after",
    [(local_scheduler, "tell"), (_sweeps, "start_local_group")],
    ids=["the-hand-over", "the-submission"],
)
def test_an_interrupt_after_the_group_was_told_leaves_the_sweep_running_and_recorded(
    component: tuple[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    after: tuple[object, str],
) -> None:
    """Ctrl-C once the group was told its trials: they are the user's, running; the record
    names them and the group, the log is kept, and the interrupt is not held up."""
    name, seen = component
    module, func = after
    real = getattr(module, func)

    def then_interrupted(*args: object) -> object:
        real(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(module, func, then_interrupted)
    go = tmp_path / "go"
    sweep = Sweep.grid(name, {"i": [0, 1, 2]}, [f"--wait_for={go}"], parallel=3)
    with get_runner() as runner:
        with pytest.raises(KeyboardInterrupt) as raised:
            runner.run_sweep(sweep, "local_cwd")
        (pid,) = _seen(seen)
        (saved,) = sweeps_dir().glob("sweep-*.json")
        record = load(saved.stem)
        assert record is not None
        handle = record.handle
        # the handle was never returned: the interrupt names the sweep
        assert raised.value.__notes__ == [
            f"the sweep {handle} was submitted; `torchx cancel {handle}` ends it"
        ]
        # not waited for: the trials wait for `go`, which is made only now
        with open(f"/proc/{pid}/stat") as f:
            assert f.read().rsplit(")", 1)[1].split()[0] != "Z"
        assert record.driver_pid == pid and all(len(t.attempts) == 1 for t in record.trials)
        go.touch()
        st = runner.wait_sweep(handle, 0.05, timeout=60)
    assert st.state == AppState.SUCCEEDED, st.format()
    assert (sweeps_dir() / f"{saved.stem}.log").exists()
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)  # the group is this process's child, its Popen dropped
