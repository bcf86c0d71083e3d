"""A sweep on the test Slurm cluster is ONE job array, throttled by Slurm itself."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from torchx.runner import Runner, Sweep, get_runner
from torchx.specs import AppState

TORCHX = Path(sys.executable).with_name("torchx")

COMPONENT = '''
import torchx.specs as specs


def trial(lr: float, bs: int, out: str) -> specs.AppDef:
    """Sleeps a little, prints its arguments; fails once if out/fail-INDEX exists.

    Args:
        lr: learning rate
        bs: batch size
        out: a folder the nodes see
    """
    script = (
        "sleep 2; "
        f'echo "trial $TORCHX_SWEEP_INDEX lr={lr} bs={bs} args=$TORCHX_SWEEP_ARGS"; '
        f'if [ -e {out}/fail-$TORCHX_SWEEP_INDEX ]; then '
        f'rm {out}/fail-$TORCHX_SWEEP_INDEX; exit 3; fi'
    )
    return specs.AppDef(
        "trial", roles=[specs.Role("t", image=".", entrypoint="bash", args=["-c", script])]
    )
'''


def _torchx(cluster: Any, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    return subprocess.run(
        [str(TORCHX), *args], env=cluster.env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _watch_running(cluster: Any, array_job: str, timeout: float = 150) -> int:
    """Poll squeue until the array has left the queue; the most tasks seen running."""
    most = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        proc = cluster.run(
            "squeue", f"--jobs={array_job}", "--array", "--noheader", "--format=%i|%T",
            check=False,
        )  # fmt: skip
        rows = [ln.split("|") for ln in proc.stdout.splitlines() if "|" in ln]
        live = [r for r in rows if r[1] not in ("COMPLETED", "FAILED", "CANCELLED")]
        most = max(most, sum(1 for r in rows if r[1] == "RUNNING"))
        if proc.returncode == 0 and not live:
            return most
        time.sleep(0.2)
    raise AssertionError(f"array {array_job} still queued after {timeout}s")


def test_six_trials_parallel_two_is_one_array(slurm_env: Any, tmp_path: Path) -> None:
    (tmp_path / "comp.py").write_text(COMPONENT)
    out = tmp_path / "out"
    out.mkdir()
    (out / "fail-4").touch()
    job_dir = tmp_path / "job"
    cfg = f"job_dir={job_dir},partition={slurm_env.partition}"
    run = _torchx(
        slurm_env, tmp_path,
        "run", "-s", "slurm", "-cfg", cfg, "--sweep", "lr=0.1,0.01,0.001", "--sweep", "bs=8,16",
        "--parallel", "2", "comp.py:trial", "--out", str(out),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip()
    assert handle.startswith("slurm://torchx/sweep-"), run.stdout

    status = json.loads(_torchx(slurm_env, tmp_path, "status", "--json", handle).stdout)
    trials = status["trials"]
    array_jobs = {t["handle"].rsplit("/", 1)[1].split("_")[0] for t in trials}
    assert len(array_jobs) == 1, trials  # one sbatch, one array job
    (array_job,) = array_jobs
    assert [t["handle"] for t in trials] == [f"slurm://torchx/{array_job}_{i}" for i in range(6)]
    assert 1 <= _watch_running(slurm_env, array_job) <= 2

    runner = get_runner()
    final = runner.wait_sweep(handle, 0.5)
    # Until accounting records a task's end, squeue answers for it, without an exit code.
    deadline = time.monotonic() + 60
    while any(t.exit_code is None for t in final.trials) and time.monotonic() < deadline:
        time.sleep(0.5)
        final = runner.sweep_status(handle)
    assert final.state == AppState.FAILED, final.format()
    assert [t.args for t in final.trials] == [
        {"lr": lr, "bs": bs} for lr in ("0.1", "0.01", "0.001") for bs in ("8", "16")
    ]
    assert [(t.state, t.exit_code) for t in final.trials] == [
        (AppState.SUCCEEDED, 0) if i != 4 else (AppState.FAILED, 3) for i in range(6)
    ]
    table = _torchx(slurm_env, tmp_path, "status", handle).stdout
    assert "5 SUCCEEDED" in table and "1 FAILED" in table and len(table.splitlines()) == 8

    log = _torchx(slurm_env, tmp_path, "log", f"{handle}/4")
    assert log.stdout == 't/0 trial 4 lr=0.001 bs=8 args={"bs": "8", "lr": "0.001"}\n', log
    # a trial's handle is an app handle like any other
    st = _torchx(slurm_env, tmp_path, "status", f"slurm://torchx/{array_job}_1")
    assert "State: SUCCEEDED" in st.stdout, st

    dry = _torchx(slurm_env, tmp_path, "run", "--dryrun", "--resume", handle)
    assert "trials 4 of 6" in dry.stdout and "#SBATCH --array=4\n" in dry.stdout, dry
    again = _torchx(slurm_env, tmp_path, "run", "--resume", handle)
    assert again.returncode == 0 and again.stdout.strip() == handle, again
    final = runner.wait_sweep(handle, 0.5)
    assert final.state == AppState.SUCCEEDED, final.format()
    assert [t.attempts for t in final.trials] == [1, 1, 1, 1, 2, 1]
    rerun = final.trials[4].handle
    assert rerun is not None and not rerun.endswith(f"/{array_job}_4") and rerun.endswith("_4")

    # the list answer says which trial each task is, from its array job's comment
    sweep_id, rerun_id = handle.rsplit("/", 1)[1], rerun.rsplit("/", 1)[1]
    jobs = {array_job, rerun_id.split("_")[0]}
    listed = {a.app_id: a.sweep for a in runner.list("slurm") if a.app_id.split("_")[0] in jobs}
    assert listed == {
        **{f"{array_job}_{i}": f"{sweep_id}/{i}" for i in range(6)},
        rerun_id: f"{sweep_id}/4",
    }


def test_grid_over_max_array_size_is_refused(slurm_env: Any, tmp_path: Path) -> None:
    limit = slurm_env.run("scontrol", "show", "config").stdout
    size = int(next(ln for ln in limit.splitlines() if ln.startswith("MaxArraySize")).split("=")[1])
    (tmp_path / "comp.py").write_text(COMPONENT)
    values = ",".join(str(i) for i in range(size + 1))
    res = _torchx(
        slurm_env, tmp_path,
        "run", "-s", "slurm", "--sweep", f"lr={values}", "comp.py:trial", "--bs", "1", "--out", ".",
    )  # fmt: skip
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and f"MaxArraySize={size}" in res.stderr, res.stderr
    assert res.stdout == ""


def test_sweep_api_describes_the_array_with_one_sacct(slurm_env: Any, tmp_path: Path) -> None:
    (tmp_path / "comp.py").write_text(COMPONENT)
    sweep = Sweep.grid(f"{tmp_path}/comp.py:trial", {"lr": [1, 2, 3]}, ["--bs", "2", "--out", "."])
    runner = get_runner()
    handle = runner.run_sweep(
        sweep, "slurm", cfg={"job_dir": str(tmp_path / "job"), "partition": slurm_env.partition}
    )
    final = runner.wait_sweep(handle, 0.5)
    assert final.state == AppState.SUCCEEDED, final.format()
    # Accounting records a job's end a moment after Slurm ends it (then squeue answers for
    # it): wait until sacct knows all three, so the count below is of a settled cluster.
    array_job = (final.trials[0].handle or "").rsplit("/", 1)[1].split("_")[0]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rows = slurm_env.run(
            "sacct", f"--jobs={array_job}", "-X", "-n", "-P", "-o", "JobID,State", check=False
        ).stdout.split()
        if sorted(rows) == [f"{array_job}_{i}|COMPLETED" for i in range(3)]:
            break
        time.sleep(0.2)
    # counting the Slurm commands a status runs: a wrapper directory first on PATH
    path, calls = slurm_env.counting_path(tmp_path, ("sacct", "squeue", "scontrol"))
    env = {**slurm_env.env, "PATH": path}
    res = subprocess.run(
        [str(TORCHX), "status", handle], env=env, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    assert "3 SUCCEEDED" in res.stdout
    assert calls.read_text().split() == ["sacct"]


def _sleeping_sweep(
    cluster: Any, tmp_path: Path, lrs: list[int], parallel: int, running: int
) -> tuple[Runner, str]:
    """A sweep of trials that sleep two minutes, at most ``parallel`` at once; returned
    once its first ``running`` trials run."""
    (tmp_path / "comp.py").write_text(COMPONENT.replace("sleep 2", "sleep 120"))
    sweep = Sweep.grid(
        f"{tmp_path}/comp.py:trial", {"lr": lrs}, ["--bs", "8", "--out", "."], parallel
    )
    runner = get_runner()
    handle = runner.run_sweep(
        sweep, "slurm", cfg={"job_dir": str(tmp_path / "job"), "partition": cluster.partition}
    )
    deadline = time.monotonic() + 60
    while any(t.state != AppState.RUNNING for t in runner.sweep_status(handle).trials[:running]):
        assert time.monotonic() < deadline, runner.sweep_status(handle).format()
        time.sleep(0.3)
    return runner, handle


def test_tasks_cancelled_while_pending_have_0_attempts(slurm_env: Any, tmp_path: Path) -> None:
    # one task at a time: tasks 1 and 2 wait (PENDING) while task 0 runs
    runner, handle = _sleeping_sweep(slurm_env, tmp_path, [1, 2, 3], 1, 1)
    assert _torchx(slurm_env, tmp_path, "cancel", handle).returncode == 0
    final = runner.wait_sweep(handle, 0.5)
    # the task that ran is one attempt; those cancelled while pending never ran
    assert [(t.state, t.attempts) for t in final.trials] == [
        (AppState.CANCELLED, 1),
        (AppState.CANCELLED, 0),
        (AppState.CANCELLED, 0),
    ], final.format()
    assert [t.exit_code for t in final.trials[1:]] == [None, None]
    # the same once accounting has the array's end (sacct, not squeue, answers then)
    time.sleep(3)
    again = runner.sweep_status(handle)
    assert [t.attempts for t in again.trials] == [1, 0, 0], again.format()


def test_a_cancelled_running_trial_shows_the_exit_code_of_its_own_status(
    slurm_env: Any, tmp_path: Path
) -> None:
    """scancel leaves 0:0 on a task's own accounting row: the sweep's one sacct reads the
    signal from the task's steps, so the table says what ``torchx status TRIAL`` says."""
    from torchx.runner._sweep_status import exit_code

    runner, handle = _sleeping_sweep(slurm_env, tmp_path, [1, 2], 0, 2)
    time.sleep(1)  # the trials' commands (their steps) have started
    assert _torchx(slurm_env, tmp_path, "cancel", handle).returncode == 0
    runner.wait_sweep(handle, 0.5)
    # once accounting has both tasks' end, sacct (not squeue) answers for them
    array_job = (runner.sweep_status(handle).trials[0].handle or "").rsplit("/", 1)[1]
    array_job = array_job.split("_")[0]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rows = slurm_env.run(
            "sacct", f"--jobs={array_job}", "-n", "-P", "-o", "JobID,State", check=False
        ).stdout.split()
        if sum(r.endswith(".batch|CANCELLED") for r in rows) == 2:
            break
        time.sleep(0.2)
    final = runner.sweep_status(handle)
    own = []
    for t in final.trials:
        assert t.handle is not None
        st = runner.status(t.handle)
        assert st is not None
        own.append(exit_code(st))
    assert [t.exit_code for t in final.trials] == own, final.format()
    assert all(t.state == AppState.CANCELLED and t.exit_code for t in final.trials), final.format()


def test_list_shows_a_sweeps_pending_trials_as_local_schedulers_do(
    slurm_env: Any, tmp_path: Path
) -> None:
    # one task at a time: tasks 1 and 2 wait (PENDING, folded by Slurm) while task 0 runs
    runner, handle = _sleeping_sweep(slurm_env, tmp_path, [1, 2, 3], 1, 1)
    try:
        listed = _torchx(slurm_env, tmp_path, "list", "-s", "slurm", "--json")
        assert listed.returncode == 0, listed.stderr
        sweep_id = handle.rsplit("/", 1)[1]
        rows = sorted(
            (r["app_id"], r["state"], r["sweep"])
            for r in json.loads(listed.stdout)
            if r.get("sweep", "").startswith(sweep_id)
        )
        status = runner.sweep_status(handle)
        assert rows == [
            ((t.handle or "").rsplit("/", 1)[1], t.state.name, f"{sweep_id}/{t.index}")
            for t in status.trials
        ], listed.stdout
        assert [r[1] for r in rows] == ["RUNNING", "PENDING", "PENDING"]
    finally:
        runner.cancel_sweep(handle)
