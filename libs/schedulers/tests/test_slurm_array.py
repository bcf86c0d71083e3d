"""Slurm job arrays built from single-app requests, without a cluster."""

from __future__ import annotations

import subprocess

import pytest

from torchx.schedulers.slurm_array import (
    _tasks_from,
    array_request,
    check_array_size,
    index_spec,
)
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, AppState, Resource, Role, SpecsError


def _app(arg: str, cpu: int = 1) -> AppDef:
    role = Role("t", image=".", entrypoint="echo", args=[arg], resource=Resource(cpu, 0, 100))
    return AppDef("trial", roles=[role])


def test_index_spec_compresses_runs_and_throttles() -> None:
    assert index_spec([0, 1, 2, 3, 4, 5], 2) == "0-5%2"
    assert index_spec([4]) == "4"
    assert index_spec([1, 3, 4, 7], 2) == "1,3-4,7%2"
    # a limit at or above the count says nothing
    assert index_spec([0, 1], 2) == "0-1"
    with pytest.raises(SpecsError):
        index_spec([])


def test_one_array_script_keeps_each_trials_commands_byte_for_byte() -> None:
    sched = SlurmScheduler()
    hostile = "a 'quoted'\n\nvalue $HOME \\ end"
    infos = {i: sched.submit_dryrun(_app(v), {}) for i, v in enumerate(["x", hostile, "z"])}
    info = array_request(infos, 2, "trial")
    script = info.request.script
    assert script.count("#SBATCH --array=") == 1 and "#SBATCH --array=0-2%2\n" in script
    assert script.count("#SBATCH --nodes=1") == 1
    assert info.request.cmd == infos[0].request.cmd
    single = infos[1].request.script
    body = single[single.index("\n\n") :]
    app_id = 'TORCHX_APP_ID="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"'
    assert body.replace('TORCHX_APP_ID="$SLURM_JOB_ID"', app_id) in script
    assert 'TORCHX_APP_ID="$SLURM_JOB_ID"' not in script
    syntax = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr


def test_trials_asking_other_resources_are_refused_naming_them() -> None:
    sched = SlurmScheduler()
    infos = {0: sched.submit_dryrun(_app("x", cpu=1), {}), 1: sched.submit_dryrun(_app("y", 2), {})}
    with pytest.raises(SpecsError) as e:
        array_request(infos, 0, "trial")
    assert "sweep trial 1" in str(e.value) and "--cpus-per-task" in str(e.value)


def test_max_array_size_is_named_in_the_error() -> None:
    check_array_size(list(range(1001)), 1001)
    check_array_size(list(range(5000)), None)
    with pytest.raises(SpecsError, match="MaxArraySize=1001"):
        check_array_size(list(range(1002)), 1001)


def test_sacct_rows_of_tasks_and_pending_ranges() -> None:
    found: dict[str, object] = {}
    _tasks_from(
        [
            ("12_0", "COMPLETED", "0:0"),
            ("12_1", "FAILED", "3:0"),
            ("12_[2-4%2]", "PENDING", "0:0"),
            ("12_5", "CANCELLED by 0", "0:15"),
        ],
        found,  # type: ignore[arg-type]
    )
    states = {k: (v.state, v.exit_code) for k, v in found.items()}  # type: ignore[attr-defined]
    assert states == {
        "12_0": (AppState.SUCCEEDED, 0),
        "12_1": (AppState.FAILED, 3),
        "12_2": (AppState.PENDING, None),
        "12_3": (AppState.PENDING, None),
        "12_4": (AppState.PENDING, None),
        "12_5": (AppState.CANCELLED, 143),
    }
