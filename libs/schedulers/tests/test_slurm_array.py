"""Slurm job arrays built from single-app requests, without a cluster."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from torchx.schedulers._slurm_script import make_script, script_shape
from torchx.schedulers.slurm_array import (
    ArrayTask,
    _sacct_rows,
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


def _array(apps: dict[int, AppDef], parallel: int = 0) -> tuple[str, dict[int, str]]:
    """The array script of ``apps``, and each trial's script as a job of its own."""
    sched = SlurmScheduler()
    first = min(apps)
    # the first trial is given as its request only
    others = {i: a for i, a in apps.items() if i != first}
    info = array_request(sched.submit_dryrun(apps[first], {}), first, others, parallel, "trial")
    singles = {i: sched.submit_dryrun(a, {}).request.script for i, a in apps.items()}
    return info.request.script, singles


def _bash(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script, "sweep"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **env},
        check=False,
    )


def _command(single: str) -> str:
    """The command line of a single-app script's role function, as written."""
    start = single.index("| tee /dev/stderr\n", single.index("torchx_role_0() {")) + 18
    return single[start : single.index("\n    rc=$?", start)]


def test_one_array_script_keeps_each_trials_commands_byte_for_byte() -> None:
    hostile = "a 'quoted'\n\nvalue $HOME \\ end"
    script, singles = _array({i: _app(v) for i, v in enumerate(["x", hostile, "z"])}, 2)
    assert script.count("#SBATCH --array=") == 1 and "#SBATCH --array=0-2%2\n" in script
    # the header, setup, launch and role function once; only each trial's own part per task
    assert script.count("#SBATCH --nodes=1") == 1
    assert script.count("set -u") == 1 and script.count("srun ") == 1
    assert script.count("torchx_role_0() {") == 1 and script.count("PYTHONUNBUFFERED=1") == 1
    for i, single in singles.items():
        arm = script[script.index(f"\n{i})\n") : script.index("\n  ;;", script.index(f"\n{i})\n"))]
        assert f"torchx_cmd_0() {{\n{_command(single)}\n}}" in arm
    assert 'TORCHX_APP_ID="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"' in script
    assert 'TORCHX_APP_ID="$SLURM_JOB_ID"' not in script
    syntax = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr


def _env_app(value: str, extra: dict[str, str]) -> AppDef:
    """Prints its environment, with ``value`` as an argument and a variable."""
    role = Role(
        "t", image=".", entrypoint="env", args=[f"ARG={value}", "env", "-0"],
        env={"V": value, **extra}, resource=Resource(1, 0, 100),
    )  # fmt: skip
    return AppDef("trial", roles=[role])


def test_each_task_runs_its_trial_as_its_own_job_would(tmp_path: Path) -> None:
    """Task ``i``'s replica gets the environment and arguments that trial ``i``'s script,
    as a job of its own, gives it (the rest needs a cluster)."""
    apps = {3: _env_app("three", {"ONLY3": "x"}), 5: _env_app("it's $HOME\nnext line", {})}
    script, singles = _array(apps)
    case = script[script.index('case "$SLURM_ARRAY_TASK_ID"') :]
    case = case[: case.index("\nexport -f torchx_role_0")]
    run = "\ntorchx_role_0\n"
    for index, single in singles.items():
        start = single.index("torchx_role_0() {")
        env = {
            "SLURM_ARRAY_TASK_ID": str(index), "SLURM_PROCID": "0", "TORCHX_ATTEMPT": "0",
            "TORCHX_APP_ID": f"7_{index}", "TORCHX_JOB_DIR": str(tmp_path),
        }  # fmt: skip
        alone = _bash(single[start : single.index("\nexport -f", start)] + run, env)
        task = _bash(case + run, env)
        assert alone.returncode == 0 and task.returncode == 0, alone.stderr + task.stderr
        seen = sorted(task.stdout.split("\0"))
        assert seen == sorted(alone.stdout.split("\0"))
        assert f"V={apps[index].roles[0].env['V']}" in seen and "TORCHX_ROLE_NAME=t" in seen
        assert ("ONLY3=x" in seen) == (index == 3)
    missing = _bash(case, {"SLURM_ARRAY_TASK_ID": "4"})
    assert missing.returncode == 2 and "no trial 4 in this array" in missing.stderr


def test_trials_asking_other_resources_are_refused_naming_them() -> None:
    with pytest.raises(SpecsError) as e:
        _array({0: _app("x", cpu=1), 1: _app("y", 2)})
    assert "sweep trial 1" in str(e.value) and "--cpus-per-task" in str(e.value)


def test_an_invalid_trial_app_is_refused_before_any_request() -> None:
    bad = AppDef("trial", roles=[Role("t", image=".", entrypoint="")])
    with pytest.raises(SpecsError, match="entrypoint"):
        _array({0: _app("x"), 1: bad})


def test_each_trial_goes_through_the_replica_helper_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torchx.schedulers._slurm_script as script_mod

    calls: list[str] = []
    real = script_mod.script_replica

    def counted(role: Role) -> object:
        calls.append(role.args[0])
        return real(role)

    monkeypatch.setattr(script_mod, "script_replica", counted)
    apps = {i: _app(f"v{i}") for i in range(5)}
    first = SlurmScheduler().submit_dryrun(apps[0], {})
    calls.clear()
    array_request(first, 0, apps, 0, "trial")
    assert sorted(calls) == [f"v{i}" for i in range(5)]


def test_max_array_size_is_named_in_the_error() -> None:
    check_array_size(list(range(1001)), 1001)
    check_array_size(list(range(5000)), None)
    with pytest.raises(SpecsError, match="MaxArraySize=1001"):
        check_array_size(list(range(1002)), 1001)


def test_sacct_rows_of_tasks_and_pending_ranges() -> None:
    found: dict[str, object] = {}
    _tasks_from(
        [
            ("12_0", "COMPLETED", "0:0", True),
            ("12_1", "FAILED", "3:0", True),
            ("12_[2-4%2]", "PENDING", "0:0", False),
            ("12_5", "CANCELLED by 0", "0:15", True),
            # accounting's 0:0 of a task still running is no exit code yet
            ("12_6", "RUNNING", "0:0", True),
            # cancelled while pending: never given nodes
            ("12_7", "CANCELLED by 0", "0:0", False),
            ("12_[8-9%1]", "CANCELLED by 0", "0:0", False),
        ],
        found,  # type: ignore[arg-type]
    )
    states = {k: (v.state, v.exit_code, v.started) for k, v in found.items()}  # type: ignore[attr-defined]
    assert states == {
        "12_0": (AppState.SUCCEEDED, 0, True),
        "12_1": (AppState.FAILED, 3, True),
        "12_2": (AppState.PENDING, None, False),
        "12_3": (AppState.PENDING, None, False),
        "12_4": (AppState.PENDING, None, False),
        "12_5": (AppState.CANCELLED, 143, True),
        "12_6": (AppState.RUNNING, None, True),
        "12_7": (AppState.CANCELLED, None, False),
        "12_8": (AppState.CANCELLED, None, False),
        "12_9": (AppState.CANCELLED, None, False),
    }


def test_sacct_rows_of_jobs_and_heterogeneous_jobs() -> None:
    found: dict[str, object] = {}
    rows = [
        ("7", "RUNNING", "0:0", True),
        ("8+0", "COMPLETED", "0:0", True),
        ("8+1", "CANCELLED by 0", "0:15", True),
        ("9+0", "RUNNING", "0:0", True),
        ("9+1", "PENDING", "0:0", False),
    ]
    _tasks_from(rows, found)  # type: ignore[arg-type]
    states = {k: (v.state, v.exit_code) for k, v in found.items()}  # type: ignore[attr-defined]
    # a heterogeneous job: its first component (state and exit code), unless any was
    # cancelled
    assert states == {
        "7": (AppState.RUNNING, None),
        "8": (AppState.CANCELLED, 143),
        "9": (AppState.RUNNING, None),
    }


def test_a_cancelled_or_timed_out_task_reads_its_exit_code_from_its_steps() -> None:
    """scancel leaves 0:0 on the task's own row and the signal on its steps: the batch
    script's code first (as the trial's own status reads it), else a step's."""
    # sacct's answer (JobID|State|ExitCode|AllocNodes), steps included
    text = """\
12_0|CANCELLED by 0|0:0|1
12_0.batch|CANCELLED|0:15|1
12_0.extern|COMPLETED|0:0|1
12_0.0|FAILED|15:0|1
12_1|TIMEOUT|0:0|1
12_1.batch|CANCELLED|0:0|1
12_1.0|CANCELLED|0:9|1
12_2|FAILED|3:0|1
12_2.batch|FAILED|3:0|1
12_3|COMPLETED|0:0|1
12_3.batch|COMPLETED|0:0|1
12_4|CANCELLED by 0|0:0|1
12_4.batch|CANCELLED|0:0|1
12_5|CANCELLED by 0|0:0|0
12_6|CANCELLED by 0|0:0|1
12_7|TIMEOUT|0:0|1
13+0|CANCELLED by 0|0:0|1
13+0.batch|CANCELLED|0:15|1
13+1|CANCELLED by 0|0:0|1
"""
    found: dict[str, ArrayTask] = {}
    _tasks_from(_sacct_rows(text), found)
    codes = {k: v.exit_code for k, v in found.items()}
    # 12_4: no step recorded a signal; 12_5: cancelled before it was given a node;
    # 12_6, 12_7: ran, but no step was recorded, so no code is known (not 0, a success)
    expected = {"12_0": 143, "12_1": 137, "12_2": 3, "12_3": 0, "12_4": 0, "12_5": None}
    expected |= {"12_6": None, "12_7": None}
    assert codes == {**expected, "13": 143}


def _outside_functions(app: AppDef) -> str:
    """The single-app script less its role functions (and the app's own name)."""
    script = make_script(app, {}, "job")
    lines = script.split("\n")
    keep, inside = [], False
    for line in lines:
        inside = inside or bool(re.match(r"^torchx_role_\d+\(\) \{$", line))
        if not inside and not line.startswith("# torchx app "):
            keep.append(line)
        inside = inside and not line.startswith("export -f torchx_role_")
    return "\n".join(keep)


@pytest.mark.parametrize(
    "change",
    [
        {"args": ["other"]},
        {"env": {"X": "1"}},
        {"entrypoint": "printf"},
        {"resource": Resource(2, 0, 100)},
        {"resource": Resource(1, 1, 100)},
        {"num_replicas": 2},
        {"max_retries": 1},
        {"name": "u"},
    ],
)
def test_script_shape_is_what_the_script_reads_outside_role_functions(
    change: dict[str, object],
) -> None:
    base = _app("x")
    other = AppDef("other", roles=[dataclasses.replace(base.roles[0], **change)])  # type: ignore[arg-type]
    same_text = _outside_functions(base) == _outside_functions(other)
    assert (script_shape(base) == script_shape(other)) == same_text


def test_list_reads_an_array_tasks_sweep_from_its_jobs_comment() -> None:
    from torchx.schedulers._slurm_parse import roles_from_comment, sweep_from_comment

    ours = "torchx:roles=trainer:2,reader;sweep=sweep-abcd2345"
    assert sweep_from_comment("41_3", ours) == "sweep-abcd2345/3"
    assert sweep_from_comment("41", ours) == "sweep-abcd2345"  # the array as one job
    assert sweep_from_comment("41_3", ours + "; the user's note") == "sweep-abcd2345/3"
    assert roles_from_comment(ours + "; note") == [("trainer", 2), ("reader", 1)]
    # a plain job, and a user's comment that looks like a sweep, are no trial
    assert sweep_from_comment("42", "torchx:roles=t") == ""
    assert sweep_from_comment("42", "torchx:roles=t; sweep=sweep-abcd2345") == ""


def _requeue_files(script: str) -> str:
    """The script's lines that name its requeue files and clear them on a first attempt."""
    start = script.index("torchx_requeues=")
    return script[start : script.index("; fi\n", start) + 5] + (
        'echo "$torchx_requeues $torchx_reason $TORCHX_REQUEUE_ASKED_FILE $torchx_requested"\n'
    )


def test_a_tasks_requeue_files_are_named_after_the_trial(tmp_path: Path) -> None:
    """Task 3 of array 7 is Slurm's job 9: its requeues are ``slurm-7_3.*``, what describe
    and requeue of the trial read; a first attempt also clears job 9's files (the names an
    earlier version gave them), and nothing of other jobs."""
    script, singles = _array({3: _app("x"), 4: _app("y")})
    names = ["7_3.requeues", "7_3.reason", "7_3.asked-0", "9.requeues", "9.reason", "8.requeues"]
    for name in names:
        (tmp_path / f"slurm-{name}").write_text("time_limit 0\n")
    env = {"SLURM_JOB_ID": "9", "TORCHX_APP_ID": "7_3", "TORCHX_JOB_DIR": str(tmp_path)}
    task = _bash(_requeue_files(script), {**env, "TORCHX_ATTEMPT": "0"})
    assert task.returncode == 0, task.stderr
    d = tmp_path
    assert task.stdout.split() == [
        f"{d}/slurm-7_3.requeues", f"{d}/slurm-7_3.reason", f"{d}/slurm-7_3.asked-0",
        f"{d}/slurm-7.requested/3",  # torchx requeue's requests: the array's folder, the task's
    ]  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slurm-8.requeues"]
    # a later attempt keeps them
    (tmp_path / "slurm-7_3.requeues").write_text("time_limit 0\n")
    again = _bash(_requeue_files(script), {**env, "TORCHX_ATTEMPT": "1"})
    assert again.returncode == 0 and (tmp_path / "slurm-7_3.requeues").exists(), again.stderr
    # a job of its own keeps naming them after its job id
    alone = _bash(_requeue_files(singles[3]), {**env, "TORCHX_ATTEMPT": "1"})
    assert alone.stdout.split()[0] == f"{d}/slurm-9.requeues", alone
    assert alone.stdout.split()[-1] == f"{d}/slurm-9.requested", alone
