"""``torchx wait`` and ``torchx describe`` given a sweep handle, on real local sweeps."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .cli_process import torchx

COMPONENT = '''
import torchx.specs as specs


def trial(lr: float, gate: str = "", retries: int = 0) -> specs.AppDef:
    """Fails for lr < 0; waits (up to 2 minutes) for the file gate first when given one.

    Args:
        lr: learning rate
        gate: a file that must exist before the trial ends (GATE.started says it began)
        retries: the role's max_retries
    """
    wait = (
        f"touch {gate}.started; for i in $(seq 1200); do [ -e {gate} ] && break; sleep 0.1; done; "
        if gate
        else ""
    )
    script = wait + f'echo lr={lr}; python3 -c "import sys; sys.exit({lr} < 0)"'
    role = specs.Role("t", image=".", entrypoint="bash", args=["-c", script], max_retries=retries)
    return specs.AppDef("trial", roles=[role])
'''


def _sweep(tmp_path: Path, *flags: str, gate: str = "", retries: int = 0) -> str:
    (tmp_path / "comp.py").write_text(COMPONENT)
    trial_args = ["--gate", gate, "--retries", str(retries)]
    proc = torchx("run", "--no-wait", *flags, "comp.py:trial", *trial_args)
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip()
    assert "/sweep-" in handle, proc.stdout
    return handle


def _until_started(gate: Path, sweep: str) -> None:
    """Until trial 0, held by ``gate``, runs, however loaded the host (60 s at most)."""
    deadline = time.monotonic() + 60
    while not Path(f"{gate}.started").exists():
        assert time.monotonic() < deadline, torchx("status", sweep).stdout
        time.sleep(0.05)


def test_wait_on_a_sweep_waits_for_every_trial_and_exits_1_if_one_failed(
    tmp_path: Path,
) -> None:
    sweep = _sweep(tmp_path, "--sweep", "lr=0.1,-1")
    app = torchx("run", "--no-wait", "utils.sh", "true").stdout.strip()
    proc = torchx("wait", sweep, f"{sweep}/0", app)
    assert proc.returncode == 1, proc.stderr
    assert sorted(proc.stdout.splitlines()) == sorted(
        [
            f"{sweep} FAILED: 1 FAILED, 1 SUCCEEDED of 2 trials (torchx status lists them)",
            f"{sweep}/0 SUCCEEDED",
            f"{app} SUCCEEDED",
        ]
    )
    data = json.loads(torchx("wait", "--json", sweep).stdout)
    assert (data["handle"], data["state"], data["timed_out"]) == (sweep, "FAILED", False)
    assert [(t["index"], t["args"], t["state"], t["exit_code"]) for t in data["trials"]] == [
        (0, {"lr": "0.1"}, "SUCCEEDED", 0),
        (1, {"lr": "-1"}, "FAILED", 1),
    ]

    # describe shows the trials as status does, and how to see one trial's AppDef
    described = torchx("describe", sweep)
    assert described.returncode == 0, described.stderr
    status = torchx("status", sweep).stdout
    assert described.stdout == status + f"one trial's AppDef: torchx describe {sweep}/INDEX\n"
    rows = [line.split() for line in status.splitlines()[2:]]
    handles = [t["handle"] for t in data["trials"]]
    assert rows == [
        ["0", "0.1", "SUCCEEDED", "1", "0", handles[0]],
        ["1", "-1", "FAILED", "1", "1", handles[1]],
    ]
    as_json = json.loads(torchx("describe", "--json", sweep).stdout)
    assert [t["handle"] for t in as_json["trials"]] == handles
    assert torchx("describe", f"{sweep}/1").stdout.startswith("AppDef trial\n")


def test_wait_on_a_sweep_times_out_with_124_and_a_waiting_trial_has_0_attempts(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    # one trial at a time: trial 1 waits until trial 0, held by the gate, has ended
    sweep = _sweep(tmp_path, "--sweep", "lr=0.1,0.2", "--parallel", "1", gate=str(gate))
    try:
        _until_started(gate, sweep)
        proc = torchx("wait", "--timeout", "1s", sweep)
        assert proc.returncode == 124, proc.stderr
        assert proc.stdout == f"{sweep} RUNNING: still running after 1s (--timeout)\n"
        waiting = json.loads(torchx("status", "--json", sweep).stdout)["trials"][1]
        assert (waiting["state"], waiting["attempts"]) == ("PENDING", 0)
    finally:
        gate.touch()
    proc = torchx("wait", sweep)
    assert (proc.returncode, proc.stdout) == (0, f"{sweep} SUCCEEDED\n"), proc.stderr
    trials = json.loads(torchx("status", "--json", sweep).stdout)["trials"]
    assert [(t["state"], t["attempts"]) for t in trials] == [("SUCCEEDED", 1)] * 2


def test_wait_on_an_unknown_sweep_exits_2() -> None:
    unknown = "local_cwd://torchx/sweep-abcdefghij"
    proc = torchx("wait", unknown)
    assert (proc.returncode, proc.stdout) == (
        2,
        f"{unknown} UNKNOWN: no such sweep here, nor app on its scheduler\n",
    )


def test_parallel_help_says_what_0_means() -> None:
    help_text = " ".join(torchx("run", "--help").stdout.split())
    assert "at most this many trials at once (0: all at once) [default: 0]" in help_text


def test_attempts_count_restarts_as_the_trials_own_status_does_and_a_bare_id_is_found(
    tmp_path: Path,
) -> None:
    sweep = _sweep(tmp_path, "--sweep", "lr=-1", retries=2)
    assert torchx("wait", sweep).returncode == 1
    trial = json.loads(torchx("status", "--json", sweep).stdout)["trials"][0]
    own = json.loads(torchx("status", "--json", trial["handle"]).stdout)
    assert own["num_restarts"] == 2
    assert (trial["state"], trial["attempts"]) == ("FAILED", 1 + own["num_restarts"])
    # run again by --resume (and failing again): the earlier submission counts one, the
    # new one its three runs
    assert torchx("run", "--resume", sweep).returncode == 1
    trial = json.loads(torchx("status", "--json", sweep).stdout)["trials"][0]
    assert (trial["state"], trial["attempts"]) == ("FAILED", 4)
    # the sweep id alone, as for an app id alone: the handle it meant
    bare = sweep.rsplit("/", 1)[1]
    proc = torchx("wait", bare)
    assert (proc.returncode, proc.stderr) == (
        2,
        f"torchx: error: app handle: got {bare!r}; did you mean {sweep}?\n",
    )


def test_a_sweep_whose_trials_were_cancelled_or_succeeded_is_cancelled(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    sweep = _sweep(tmp_path, "--sweep", "lr=0.1,0.2", "--parallel", "1", gate=str(gate))
    try:
        _until_started(gate, sweep)
        assert torchx("cancel", f"{sweep}/0").returncode == 0
    finally:
        gate.touch()  # trial 1 then runs and succeeds
    proc = torchx("wait", sweep)
    assert (proc.returncode, proc.stdout) == (
        1,  # as for a cancelled app
        f"{sweep} CANCELLED: 1 CANCELLED, 1 SUCCEEDED of 2 trials (torchx status lists them)\n",
    ), proc.stderr


def test_trials_cancelled_before_they_started_have_0_attempts(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    # one trial at a time: trials 1 and 2 wait (PENDING) while trial 0 runs
    sweep = _sweep(tmp_path, "--sweep", "lr=0.1,0.2,0.3", "--parallel", "1", gate=str(gate))
    try:
        _until_started(gate, sweep)
        assert torchx("cancel", sweep).returncode == 0
    finally:
        gate.touch()
    torchx("wait", sweep)
    trials = json.loads(torchx("status", "--json", sweep).stdout)["trials"]
    # the one that ran is one attempt; the others never ran
    assert [(t["state"], t["attempts"]) for t in trials] == [
        ("CANCELLED", 1),
        ("CANCELLED", 0),
        ("CANCELLED", 0),
    ]


def test_cli_run_wait_false_of_the_config_leaves_a_local_sweep_running(tmp_path: Path) -> None:
    (tmp_path / "comp.py").write_text(COMPONENT)
    (tmp_path / ".torchxconfig").write_text("[cli:run]\nwait = false\n")
    gate = tmp_path / "gate"
    proc = torchx("run", "--sweep", "lr=0.1", "comp.py:trial", "--gate", str(gate))
    try:
        # returned with the trial still held by the gate: the sweep was not waited on
        assert proc.returncode == 0, proc.stderr
        sweep = proc.stdout.strip()
        assert "/sweep-" in sweep, proc.stdout
        state = json.loads(torchx("status", "--json", sweep).stdout)["state"]
        assert state in ("PENDING", "RUNNING"), state
    finally:
        gate.touch()
    assert torchx("wait", sweep).stdout == f"{sweep} SUCCEEDED\n"


def test_watch_and_describe_show_the_objectives_status_shows(tmp_path: Path) -> None:
    from torchx.runtime.tracking import FsspecResultTracker, sweep_trial_key

    sweep = _sweep(tmp_path, "--sweep", "lr=0.1,0.2,0.3")
    assert torchx("wait", sweep).returncode == 0
    url = (tmp_path / "results").as_uri()
    stored = FsspecResultTracker(url)
    for index, loss in enumerate((0.5, 0.1, 0.3)):
        stored[sweep_trial_key(sweep, index)] = {"loss": loss}
    ranking = ("--results", url, "--objective", "loss")
    table = torchx("status", sweep, *ranking)
    assert table.returncode == 0 and table.stderr == "", table.stderr
    rows = table.stdout.splitlines()[2:]
    assert [row.split()[:3] for row in rows] == [
        ["1", "0.2", "0.1"],
        ["2", "0.3", "0.3"],
        ["0", "0.1", "0.5"],
    ]
    # the watch draws the same table (the sweep has ended: once), ranked the same way
    watched = torchx("status", "--watch", sweep, *ranking)
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout.splitlines()[1:] == table.stdout.splitlines()
    assert (
        torchx("status", "--watch", sweep, *ranking, "--maximize").stdout.splitlines()[3:]
        == rows[::-1]
    )
    described = torchx("describe", sweep, *ranking)
    assert described.stdout == f"{table.stdout}one trial's AppDef: torchx describe {sweep}/INDEX\n"
    # what reading them warns of is drawn with the table, below it, not between redraws
    misspelt = torchx("status", "--watch", sweep, "--results", url, "--objective", "los")
    assert misspelt.stderr == ""
    assert misspelt.stdout.splitlines()[-1].startswith("torchx: warning: --objective: ")
    # of an app, as status says
    app = rows[0].split()[-1]
    refused = torchx("describe", app, "--results", url)
    assert (refused.returncode, refused.stderr) == (
        2,
        f"torchx: error: --results: got it with {app!r}, an app's handle; it ranks a sweep's"
        " trials: give the sweep's handle\n",
    )
