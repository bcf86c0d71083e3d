"""A new local sweep's group process is started before its trials are planned, so its
interpreter starts meanwhile; when planning fails it is called off and nothing of the
sweep is left: no process, no record, no log, no app."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchx.runner import Sweep, get_runner
from torchx.runner._sweep_record import sweeps_dir
from torchx.runner._sweeps import record_of
from torchx.specs import AppState

# Each trial's app, when made, writes down the group processes the planning process has
# started by then (its children running _local_group), one pid a line.
COMPONENT = '''
import os

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


def step(i: int, fail_at: int = -1) -> specs.AppDef:
    """One trial; making trial ``fail_at``'s app fails.

    Args:
        i: the trial's number
        fail_at: the trial whose app cannot be made
    """
    with open(SEEN, "a") as f:
        f.writelines(pid + "\\n" for pid in _groups())
    if i == fail_at:
        raise ValueError(f"trial {{i}} cannot be made")
    return specs.AppDef("step", roles=[specs.Role("s", image=".", entrypoint="true")])
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
