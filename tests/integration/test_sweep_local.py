"""Sweeps on local_cwd: one group of trials, at most --parallel at once, one handle."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from torchx_test_fixtures_sweep_lock import holding_resume_lock
from torchx_test_fixtures_waiting import wait_until

from torchx.runner import Sweep, get_runner
from torchx.runner._sweep_record import sweeps_dir
from torchx.runner._sweeps import record_of
from torchx.specs import AppState

TORCHX = Path(sys.executable).with_name("torchx")

COMPONENT = '''
import torchx.specs as specs


def trial(
    lr: float, bs: int = 32, sleep: float = 0.3, out: str = ".", after: str = ""
) -> specs.AppDef:
    """Records when it ran, then fails for lr < 0.

    Args:
        lr: learning rate
        bs: batch size
        after: a file in out that must exist (up to 2 minutes) before the trial ends
    """
    wait = f"for i in $(seq 1200); do [ -e {out}/{after} ] && break; sleep 0.1; done; "
    script = (
        f'echo "$(date +%s.%N)" > {out}/$TORCHX_SWEEP_INDEX.start; '
        f'echo "$TORCHX_SWEEP_ARGS" > {out}/$TORCHX_SWEEP_INDEX.args; '
        f"sleep {sleep}; "
        + (wait if after else "")
        + f'echo "$(date +%s.%N)" > {out}/$TORCHX_SWEEP_INDEX.end; '
        f"echo trial $TORCHX_SWEEP_INDEX lr={lr} bs={bs}; "
        f'python3 -c "import sys; sys.exit({lr} < 0)"'
    )
    return specs.AppDef(
        "trial", roles=[specs.Role("t", image=".", entrypoint="bash", args=["-c", script])]
    )
'''


@pytest.fixture
def component(tmp_path: Path) -> Path:
    path = tmp_path / "comp.py"
    path.write_text(COMPONENT)
    return path


def _torchx(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    return subprocess.run(
        [str(TORCHX), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _most_at_once(out: Path, n: int) -> int:
    events = []
    for i in range(n):
        events.append((float((out / f"{i}.start").read_text()), 1))
        events.append((float((out / f"{i}.end").read_text()), -1))
    running = most = 0
    for _, step in sorted(events, key=lambda e: (e[0], e[1])):
        running += step
        most = max(most, running)
    return most


def test_twenty_trials_never_more_than_four_at_once(component: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    values = ",".join(str(0.01 * (i + 1)) for i in range(10))
    run = _torchx(
        tmp_path,
        "run", "--sweep", f"lr={values}", "--sweep", "bs=8,16", "--parallel", "4",
        # the first trials end only once trial 1 has started: they overlap however slowly
        # the machine starts each one
        f"{component}:trial", "--out", str(out), "--after", "1.start",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip()
    assert handle.startswith("local_cwd://torchx/sweep-"), run.stdout
    most = _most_at_once(out, 20)
    # recorded by the trials themselves: the limit held, and trials did overlap
    assert 2 <= most <= 4, most
    assert json.loads((out / "3.args").read_text()) == {"bs": "16", "lr": "0.02"}

    status = _torchx(tmp_path, "status", "--json", handle)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["state"] == "SUCCEEDED"
    assert [t["index"] for t in data["trials"]] == list(range(20))
    assert data["trials"][3]["args"] == {"lr": "0.02", "bs": "16"}
    assert {(t["state"], t["attempts"], t["exit_code"]) for t in data["trials"]} == {
        ("SUCCEEDED", 1, 0)
    }
    table = _torchx(tmp_path, "status", handle).stdout
    assert "20 SUCCEEDED" in table and len(table.strip().splitlines()) == 22

    log = _torchx(tmp_path, "log", f"{handle}/3")
    assert log.stdout == "t/0 trial 3 lr=0.02 bs=16\n", log.stderr
    one = _torchx(tmp_path, "log", f"{handle}/3/t/0")
    assert one.stdout == log.stdout
    # the trial's own handle works as any app handle does
    trial = data["trials"][3]["handle"]
    assert _torchx(tmp_path, "log", trial).stdout == log.stdout
    assert "SUCCEEDED" in _torchx(tmp_path, "status", f"{handle}/3").stdout


def _processes_with(marker: str) -> list[int]:
    """Processes whose command line or environment holds ``marker``: the sweep id is on
    the group's command line (its trials' supervisors are forked from it) and in every
    replica's environment (TORCHX_SWEEP_ID)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            seen = Path(f"/proc/{pid}/cmdline").read_bytes()
            seen += Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in seen:
            found.append(int(pid))
    return found


def test_cancel_ends_every_trial_and_leaves_no_process(component: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    marker = f"{tmp_path.name}-sleeper"
    sweep = Sweep.grid(
        str(component) + ":trial",
        {"lr": [1, 2, 3, 4, 5, 6]},
        base_args=["--sleep", "300", "--out", str(out)],
        parallel=2,
    )
    runner = get_runner()
    handle = runner.run_sweep(sweep, "local_cwd", cfg={"log_dir": str(tmp_path / marker)})
    wait_until("two trials to start", lambda: len(list(out.glob("*.start"))) >= 2)

    def two_running() -> bool:
        # a supervisor writes RUNNING within its state-write interval after its replica
        # starts (describe's documented lag), so the status may lag the trial's own file
        states = [t.state for t in runner.sweep_status(handle).trials]
        assert states.count(AppState.RUNNING) <= 2, states  # never more than --parallel
        return states.count(AppState.RUNNING) == 2

    wait_until("two trials RUNNING in the sweep's status", two_running)
    sweep_id = handle.rsplit("/", 1)[1]
    # the group, the two running trials' supervisors and their replicas
    assert len(_processes_with(sweep_id)) >= 5, "the group and the running trials"

    cancel = _torchx(tmp_path, "cancel", handle)
    assert cancel.returncode == 0, cancel.stderr
    assert cancel.stdout.strip() == f"cancelled {handle}"
    final = runner.sweep_status(handle)
    assert final.state == AppState.CANCELLED, final.format()
    assert {t.state for t in final.trials} == {AppState.CANCELLED}
    # every trial was submitted to the one group; the four waiting never started, so they
    # count no attempt
    assert [t.attempts for t in final.trials] == [1, 1, 0, 0, 0, 0]
    assert _processes_with(sweep_id) == []
    assert len(list(out.glob("*.start"))) == 2


def test_failed_trial_is_rerun_alone_by_resume(component: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    runner = get_runner()
    sweep = Sweep.of(
        f"{component}:trial",
        [{"lr": 0.1}, {"lr": -1}, {"lr": 0.2}],
        base_args=["--sleep", "0", "--out", str(out)],
    )
    handle = runner.run_sweep(sweep, "local_cwd")
    st = runner.wait_sweep(handle, 0.1)
    assert st.state == AppState.FAILED
    assert [(t.state, t.exit_code) for t in st.trials] == [
        (AppState.SUCCEEDED, 0),
        (AppState.FAILED, 1),
        (AppState.SUCCEEDED, 0),
    ]
    dry = _torchx(tmp_path, "run", "--dryrun", "--resume", handle)
    assert dry.returncode == 0, dry.stderr
    assert "trials 1 of 3" in dry.stdout
    assert "trial 1: lr=-1" in dry.stdout and "trial 0:" not in dry.stdout
    again = _torchx(tmp_path, "run", "--resume", handle)
    assert again.returncode == 1  # trial 1 fails again, as it must
    assert again.stdout.strip() == handle
    st = runner.sweep_status(handle)
    assert [t.attempts for t in st.trials] == [1, 2, 1]


def test_bad_input_is_one_line_before_anything_runs(component: Path, tmp_path: Path) -> None:
    cases = {
        ("--sweep", "lr=0.1,abc"): "sweep argument 'lr': got 'abc'",
        ("--sweep", "lrr=1"): "did you mean 'lr'",
        ("--sweep", "lr="): "grid is empty",
        ("--sweep", "lr=0.1,,0.2"): "value 2 is empty",
        ("--parallel", "2"): "--parallel: only with --sweep",
    }
    for flags, words in cases.items():
        res = _torchx(tmp_path, "run", *flags, f"{component}:trial")
        assert res.returncode == 2, res
        assert res.stdout == ""
        assert res.stderr.count("\n") == 1 and words in res.stderr, res.stderr
    assert not list((tmp_path).glob("*.start"))


def test_one_waiting_trial_is_cancelled_without_waiting_for_a_place(
    component: Path, tmp_path: Path
) -> None:
    """One group runs the trials; cancelling one not started yet ends it at once, and a
    group that is gone leaves its waiting trials FAILED, not PENDING for ever."""
    out = tmp_path / "out"
    out.mkdir()
    sweep = Sweep.grid(
        str(component) + ":trial",
        {"lr": [1, 2, 3]},
        base_args=["--sleep", "300", "--out", str(out)],
        parallel=1,
    )
    runner = get_runner()
    handle = runner.run_sweep(sweep, "local_cwd", cfg={"log_dir": str(tmp_path / "logs")})
    # started, and recorded as such (within its supervisor's state-write interval)
    wait_until(
        "trial 0 started and RUNNING",
        lambda: (
            (out / "0.start").exists()
            and runner.sweep_status(handle).trials[0].state == AppState.RUNNING
        ),
    )
    sweep_id = handle.rsplit("/", 1)[1]
    group = record_of(handle).driver_pid
    assert group is not None and b"_local_group" in _cmdline(group)
    # the trial's supervisor is forked from the group: no interpreter starts per trial
    assert [p for p in _processes_with(sweep_id) if p != group and b"_local_group" in _cmdline(p)]

    waiting = runner.sweep_trial_handle(handle, 2)
    assert waiting is not None
    runner.cancel(waiting)  # returns once it ended
    st = runner.sweep_status(handle)
    assert [t.state for t in st.trials] == [AppState.RUNNING, AppState.PENDING, AppState.CANCELLED]

    os.kill(group, 9)  # the group itself; its trials' supervisors are sessions of their own
    deadline = time.monotonic() + 60
    while runner.sweep_status(handle).trials[1].state == AppState.PENDING:
        assert time.monotonic() < deadline, runner.sweep_status(handle).format()
        time.sleep(0.05)
    st = runner.sweep_status(handle)
    assert st.trials[1].state == AppState.FAILED and "group" in st.trials[1].msg, st.format()
    runner.cancel_sweep(handle)
    assert runner.sweep_status(handle).trials[0].state == AppState.CANCELLED
    deadline = time.monotonic() + 60
    while _processes_with(sweep_id) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with(sweep_id) == []
    assert sorted(p.name for p in out.glob("*.start")) == ["0.start"]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] not in (b"Z", b"X")


def test_a_trial_whose_supervisor_dies_is_stopped_by_its_group(
    component: Path, tmp_path: Path
) -> None:
    """The group is its trials' watchdog: a trial's supervisor killed with SIGKILL leaves
    no replica running, the trial is recorded FAILED saying so, and the group goes on."""
    out = tmp_path / "out"
    out.mkdir()
    sweep = Sweep.grid(
        str(component) + ":trial",
        {"lr": [1, 2]},
        base_args=["--sleep", "300", "--out", str(out)],
        parallel=1,
    )
    runner = get_runner()
    handle = runner.run_sweep(sweep, "local_cwd", cfg={"log_dir": str(tmp_path / "logs")})
    trial = runner.sweep_trial_handle(handle, 0)
    assert trial is not None
    (state_file,) = (tmp_path / "logs").glob(f"*/{trial.rsplit('/', 1)[1]}/.torchx/state.json")
    deadline = time.monotonic() + 60
    state: dict[str, Any] = {}
    while not (out / "0.start").exists() or state.get("state") != "RUNNING":
        assert time.monotonic() < deadline, state
        time.sleep(0.05)
        state = json.loads(state_file.read_text())
    supervisor = state["supervisor_pid"]
    assert isinstance(supervisor, int)
    (replica,) = state["replicas"]
    # no watchdog forked per trial: the supervisor's only child is the replica
    children = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
    assert children == [str(replica["pid"])]
    os.kill(supervisor, 9)

    # No status is asked meanwhile: asked, it would kill the recorded groups itself.
    deadline = time.monotonic() + 60
    while _running(replica["pid"]) or state["state"] == "RUNNING":
        assert time.monotonic() < deadline, "the group did not stop the orphaned replica"
        time.sleep(0.05)
        state = json.loads(state_file.read_text())
    assert state["state"] == "FAILED"
    assert f"supervisor (pid {supervisor}) ended without recording" in str(state["msg"])
    assert runner.sweep_status(handle).trials[0].state == AppState.FAILED
    # the group goes on with the next trial
    deadline = time.monotonic() + 60
    while not (out / "1.start").exists():
        assert time.monotonic() < deadline, runner.sweep_status(handle).format()
        time.sleep(0.05)
    runner.cancel_sweep(handle)
    assert [t.state for t in runner.sweep_status(handle).trials] == [
        AppState.FAILED,
        AppState.CANCELLED,
    ]
    assert _processes_with(handle.rsplit("/", 1)[1]) == []


def _wait_for(what: str, ready: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_one_worker_supervises_trial_after_trial_and_cancels_only_a_marked_one(
    component: Path, tmp_path: Path
) -> None:
    """No fork per trial: one worker of the group supervises the trials one after the
    other. A signal reaches the worker, not a trial: only a trial whose cancel marker is
    there (``cancel`` writes it first) is cancelled, and the next trial runs."""
    out = tmp_path / "out"
    out.mkdir()
    sweep = Sweep.of(
        str(component) + ":trial",
        [{"lr": 1, "after": f"go{i}"} for i in range(3)],
        base_args=["--sleep", "0", "--out", str(out)],
        parallel=1,
    )
    runner = get_runner()
    handle = runner.run_sweep(sweep, "local_cwd", cfg={"log_dir": str(tmp_path / "logs")})
    trials = [str(runner.sweep_trial_handle(handle, i)) for i in range(3)]

    def state(i: int) -> dict[str, Any]:
        (path,) = (tmp_path / "logs").glob(f"*/{trials[i].rsplit('/', 1)[1]}/.torchx/state.json")
        data: dict[str, Any] = json.loads(path.read_text())
        return data

    _wait_for("trial 0 runs", lambda: (out / "0.start").exists() and state(0)["state"] == "RUNNING")
    worker = state(0)["supervisor_pid"]
    assert state(0)["supervisor_shared"] is True
    # a signal with no cancel marker (one meant for a trial that ended meanwhile)
    os.kill(worker, signal.SIGTERM)
    (out / "go0").touch()
    _wait_for("trial 0 ends", lambda: state(0)["state"] not in ("PENDING", "RUNNING"))
    assert state(0)["state"] == "SUCCEEDED", state(0)

    _wait_for("trial 1 runs", lambda: (out / "1.start").exists() and state(1)["state"] == "RUNNING")
    assert state(1)["supervisor_pid"] == worker
    runner.cancel(trials[1])  # returns once it ended
    assert state(1)["state"] == "CANCELLED"

    _wait_for("trial 2 runs", lambda: (out / "2.start").exists() and state(2)["state"] == "RUNNING")
    assert state(2)["supervisor_pid"] == worker
    (out / "go2").touch()
    st = runner.wait_sweep(handle, 0.05)
    assert [t.state for t in st.trials] == [
        AppState.SUCCEEDED,
        AppState.CANCELLED,
        AppState.SUCCEEDED,
    ], st.format()
    # each trial's output went to its own log, though one process supervised them all
    assert [line.strip() for line in runner.log_lines(trials[2], "t")] == ["trial 2 lr=1.0 bs=32"]
    assert [line.strip() for line in runner.log_lines(trials[1], "t")] == []
    assert _processes_with(handle.rsplit("/", 1)[1]) == []


def test_what_a_trials_supervisor_prints_is_kept(component: Path, tmp_path: Path) -> None:
    """A worker makes a trial's supervisor.log only when its supervisor prints something;
    with the trial's directory deleted, the lines go to the sweep's own log."""
    out = tmp_path / "out"
    out.mkdir()
    sweep = Sweep.grid(
        str(component) + ":trial",
        {"lr": [1, 2]},
        base_args=["--sleep", "0", "--out", str(out), "--after", "go"],
        parallel=1,
    )
    runner = get_runner()
    handle = runner.run_sweep(sweep, "local_cwd", cfg={"log_dir": str(tmp_path / "logs")})
    first = str(runner.sweep_trial_handle(handle, 0)).rsplit("/", 1)[1]
    (app_dir,) = (tmp_path / "logs").glob(f"*/{first}")
    state = app_dir / ".torchx" / "state.json"
    # once it runs, its supervisor writes nothing more there until the trial ends
    _wait_for("trial 0 runs", lambda: json.loads(state.read_text())["state"] == "RUNNING")
    shutil.rmtree(app_dir)
    _wait_for("trial 1 runs", lambda: (out / "1.start").exists())
    (out / "go").touch()
    st = runner.wait_sweep(handle, 0.05)
    assert [t.state for t in st.trials] == [AppState.FAILED, AppState.SUCCEEDED], st.format()
    sweep_log = sweeps_dir() / f"{handle.rsplit('/', 1)[1]}.log"
    assert f"torchx: {app_dir} was deleted; stopping the app" in sweep_log.read_text()
    second = str(runner.sweep_trial_handle(handle, 1)).rsplit("/", 1)[1]
    (meta,) = (tmp_path / "logs").glob(f"*/{second}/.torchx")
    assert not (meta / "supervisor.log").exists()  # it printed nothing


def test_a_sweep_id_alone_is_found_from_its_record_here(component: Path, tmp_path: Path) -> None:
    runner = get_runner()
    sweep = Sweep.of(
        f"{component}:trial", [{"lr": 1}], base_args=["--sleep", "0", "--out", str(tmp_path)]
    )
    handle = runner.run_sweep(sweep, "local_cwd")
    assert runner.wait_sweep(handle, 0.05).state == AppState.SUCCEEDED
    # the handle of a sweep id alone, from its record here (as `torchx wait ID` suggests it)
    from torchx.runner import sweep_handle_of

    assert sweep_handle_of(handle.rsplit("/", 1)[1]) == handle
    assert sweep_handle_of("sweep-abcdefghij") is None  # no record of it here
    assert sweep_handle_of("trial-abc") is None  # not a sweep id


def test_the_cli_says_a_resume_is_running(component: Path, tmp_path: Path) -> None:
    """While a resume holds the sweep (here a child process holds its lock), a second
    ``run --resume`` is one line naming the sweep, the other resume and the fix; ``status``
    says the sweep is being resumed, and ``wait`` waits."""
    runner = get_runner()
    sweep = Sweep.of(
        f"{component}:trial", [{"lr": -1}], base_args=["--sleep", "0", "--out", str(tmp_path)]
    )
    handle = runner.run_sweep(sweep, "local_cwd")
    assert runner.wait_sweep(handle, 0.05).state == AppState.FAILED
    with holding_resume_lock(handle) as holder:
        again = _torchx(tmp_path, "run", "--resume", handle)
        assert again.returncode == 2 and again.stdout == ""
        assert again.stderr.count("\n") == 1, again.stderr
        assert handle in again.stderr and f"(pid {holder.pid})" in again.stderr
        assert "another resume of this sweep is running" in again.stderr
        assert f"torchx wait {handle}" in again.stderr
        st = _torchx(tmp_path, "status", handle)
        assert st.returncode == 0, st.stderr
        first, why = st.stdout.splitlines()[:2]
        assert first.startswith(f"Sweep {handle}: PENDING")
        assert why.startswith(f"a resume of it is running (pid {holder.pid})")
        waited = _torchx(tmp_path, "wait", "--timeout", "0.5", handle)
        assert waited.returncode == 124, (waited.stdout, waited.stderr)
    assert runner.sweep_status(handle).state == AppState.FAILED


def test_list_shows_which_sweep_and_trial_each_app_is(component: Path, tmp_path: Path) -> None:
    """The local scheduler's list answer reads each shown app's own request, which holds
    its trial's environment: the SWEEP column costs no sweep record."""
    runner = get_runner()
    sweep = Sweep.of(
        f"{component}:trial",
        [{"lr": 0.1}, {"lr": 0.2}],
        base_args=["--sleep", "0", "--out", str(tmp_path)],
    )
    handle = runner.run_sweep(sweep, "local_cwd")
    assert runner.wait_sweep(handle, 0.05).state == AppState.SUCCEEDED
    plain = _torchx(tmp_path, "run", "-s", "local_cwd", "utils.echo", "--msg", "hi")
    assert plain.returncode == 0, plain.stderr
    sweep_id = handle.rsplit("/", 1)[1]
    trials = {t.handle: f"{sweep_id}/{t.index}" for t in runner.sweep_status(handle).trials}
    (sweeps_dir() / f"{sweep_id}.json").unlink()  # the listing never reads it

    table = _torchx(tmp_path, "list", "-s", "local_cwd", "--all")
    assert table.returncode == 0, table.stderr
    head, *rows = table.stdout.splitlines()
    assert head.split() == ["APP", "HANDLE", "STATE", "NAME", "STARTED", "ENDED", "SWEEP"]
    # (other tests' apps may be listed too: this file's tests share one state dir)
    mine = {**trials, plain.stdout.strip(): "-"}
    by_handle = {r.split()[0]: r.split()[-1] for r in rows if r.split()[0] in mine}
    assert by_handle == mine

    as_json = _torchx(tmp_path, "list", "-s", "local_cwd", "--all", "--json")
    assert as_json.returncode == 0, as_json.stderr
    got = {
        a["app_handle"]: a["sweep"] for a in json.loads(as_json.stdout) if a["app_handle"] in mine
    }
    assert got == {**trials, plain.stdout.strip(): ""}
