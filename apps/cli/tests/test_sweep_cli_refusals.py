"""What a sweep cannot do, said in one line naming the fix, never silently dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchx.cli._sweep_cli import resolve_trial

from .cli_invoke import invoke, refused

COMPONENT = '''
import torchx.specs as specs


def t(lr: float = 0.1, fail_bs: int = -1, code: int = 0) -> specs.AppDef:
    """Echoes lr, exits with code.

    Args:
        lr: learning rate
        fail_bs: a batch size to fail at
        code: the exit code
    """
    role = specs.Role("t", image=".", entrypoint="sh", args=["-c", f"echo lr={lr}; exit {code}"])
    return specs.AppDef("t", roles=[role])
'''


def test_a_sweep_name_spelled_with_a_dash_names_the_parameter(isolated: Path) -> None:
    (isolated / "comp.py").write_text(COMPONENT)
    fix = (
        "torchx: error: sweep argument: got 'fail-bs'; ./comp.py:t calls it fail_bs; write it "
        "as --sweep fail_bs=V1,V2\n"
    )
    assert refused("run", "--sweep", "fail-bs=1,2", "./comp.py:t") == fix
    # the two spellings of one argument: the dashed one is named, not a per-trial clash
    assert (
        refused("run", "--dryrun", "--sweep", "fail-bs=1", "--sweep", "fail_bs=2", "./comp.py:t")
        == fix
    )


def test_requeue_of_a_sweep_points_at_a_trial_and_at_resume(isolated: Path) -> None:
    code, out, err = invoke("run", "--sweep", "msg=a,b", "utils.echo")
    assert code == 0, err
    sweep = out.splitlines()[0]
    assert refused("requeue", sweep) == (
        f"torchx: error: requeue: got {sweep!r}, a sweep; requeue restarts one app, such as one "
        f"trial (torchx requeue {sweep}/INDEX); to run again the trials that did not succeed: "
        f"torchx run --resume {sweep}\n"
    )
    # a trial is one app: requeue reaches it (an ended one is said to have ended)
    trial = resolve_trial(f"{sweep}/1")
    assert refused("requeue", f"{sweep}/1") == (
        f"torchx: error: app id: got {trial.rpartition('/')[2]!r}; has ended (SUCCEEDED); only "
        "a running app can be requeued, `torchx run` it again instead\n"
    )


def test_resume_refuses_options_that_would_change_the_recorded_sweep(isolated: Path) -> None:
    (isolated / "comp.py").write_text(COMPONENT)
    code, out, err = invoke("run", "--sweep", "code=0,3", "./comp.py:t")
    assert code == 1, err
    sweep = out.splitlines()[0]

    def line(names: str) -> str:
        return (
            f"torchx: error: --resume: got {names}; a resume runs the trials as {sweep} recorded "
            f"them (on local_cwd, with its --parallel, --cfg, workspace and parent run): leave out"
            f" {names}, or start a new sweep with --sweep\n"
        )

    assert refused("run", "-s", "slurm", "--resume", sweep, "--dryrun") == line("-s")
    assert refused("run", "--resume", sweep, "--parallel", "7", "--dryrun") == line("--parallel")
    assert refused("run", "--resume", sweep, "--cfg", "foo=bar") == line("--cfg")
    assert refused("run", "--resume", sweep, "--workspace", "", "--parallel", "3") == line(
        "--parallel, --workspace"
    )
    # naming the sweep's own scheduler changes nothing
    code, out, err = invoke("run", "-s", "local_cwd", "--resume", sweep, "--dryrun")
    assert code == 0 and "--resume" not in err, err


def test_log_with_a_sweep_is_refused_naming_torchx_log(isolated: Path) -> None:
    line = (
        "torchx: error: --log: a sweep's trials are not streamed together; leave out --log and "
        "follow one trial with torchx log -f SWEEP/INDEX (SWEEP: the handle it prints)\n"
    )
    assert refused("run", "--log", "--sweep", "msg=a,b", "utils.echo") == line
    assert refused("run", "--log", "--resume", "local_cwd://torchx/sweep-abcdefghij") == line
    assert not list((isolated / "state").rglob("sweep-*"))  # nothing was submitted
    code, _, err = invoke("run", "--no-log", "--sweep", "msg=a,b", "utils.echo")
    assert code == 0 and "--log" not in err, err


def test_objective_asked_for_with_no_tracker_here_says_where_to_configure_one(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TORCHX_TRACKERS", raising=False)
    code, out, err = invoke("run", "--sweep", "msg=a,b", "utils.echo")
    assert code == 0, err
    sweep = out.splitlines()[0]
    line = (
        "torchx: warning: --objective: no tracker is configured here to read 'val_loss' from; "
        "configure the one the trials recorded to ([torchx:tracker] in .torchxconfig, or "
        "TORCHX_TRACKERS and TORCHX_TRACKER_<NAME>_CONFIG as when the sweep ran), or give "
        "--results URL where they stored result documents\n"
    )
    for extra in ((), ("--json",), ("--maximize",)):
        code, out, err = invoke("status", sweep, "--objective", "val_loss", *extra)
        assert (code, err) == (0, line) and "SUCCEEDED" in out
    code, _, err = invoke("status", sweep, "--maximize")
    assert code == 0 and err == line.replace("'val_loss'", "'objective'")
    code, _, err = invoke("status", sweep)  # no objective asked for: nothing to say
    assert (code, err) == (0, "")


def test_roles_with_a_sweep_handle_is_refused_naming_a_trial(isolated: Path) -> None:
    code, out, err = invoke("run", "--sweep", "msg=a,b", "utils.echo")
    assert code == 0, err
    sweep = out.splitlines()[0]
    for extra in ((), ("--json",), ("--watch",)):
        assert refused("status", "--roles", "echo", *extra, sweep) == (
            f"torchx: error: --roles: got it with {sweep!r}, a sweep; a trial's status shows its"
            f" roles: torchx status --roles echo {sweep}/INDEX\n"
        )
    code, out, err = invoke("status", "--roles", "echo", f"{sweep}/1")
    assert code == 0 and "echo[0]" in out, out + err


@pytest.mark.parametrize(
    ("given", "why"),
    [
        (
            "local_cwd://torchx/sweep-abc",
            "'sweep-abc' is no sweep id, so no sweep has it: a sweep "
            "id is sweep- and 4 to 32 of a-z and 2-7, e.g. sweep-abcd2345; ",
        ),
        (
            "local_cwd://torchx/sweep-abc1",
            "'sweep-abc1' is no sweep id, so no sweep has it: a "
            "sweep id is sweep- and 4 to 32 of a-z and 2-7, e.g. sweep-abcd2345; ",
        ),
        ("local_cwd://torchx/echo-abcd", "'echo-abcd' is an app's id, not a sweep's; "),
        ("sweep-abcd", ""),
    ],
)
def test_resume_of_what_names_no_sweep_says_why(isolated: Path, given: str, why: str) -> None:
    assert refused("run", "--resume", given) == (
        f"torchx: error: --resume: got {given!r}; {why}give the sweep handle `torchx run "
        "--sweep` printed (SCHEDULER://SESSION/sweep-ID)\n"
    )
