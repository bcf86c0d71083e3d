"""The sbatch script's side of preemption, as a dry run: the warning signal ahead of the
time limit, the requeue cap, and bad input in one line."""

from __future__ import annotations

import pytest

from torchx.schedulers._slurm_preemption import time_limit_seconds
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, CfgVal, Role, SpecsError


def _script(**cfg: CfgVal) -> str:
    app = AppDef("a", [Role("r", image="", entrypoint="python", args=["train.py"])])
    return SlurmScheduler("t").submit_dryrun(app, dict(cfg)).request.script


def _sbatch(script: str) -> list[str]:
    return [ln for ln in script.splitlines() if ln.startswith("#SBATCH --signal")]


def test_the_script_asks_for_the_warning_ahead_of_the_limit_and_requeues() -> None:
    script = _script(time="10", preempt_warning_seconds=120, max_time_requeues=2)
    assert _sbatch(script) == ["#SBATCH --signal=B:USR1@120"]
    assert "#SBATCH --requeue" in script
    assert "trap torchx_warn USR1" in script
    assert 'scancel --signal=TERM "$SLURM_JOB_ID"' in script  # passed on to the app
    assert "torchx_max_time_requeues=2" in script
    # a warning more than lead + a minute before the end is a preemption
    assert "torchx_preempt_before=420" in script
    # each replica's wrapper outlives the app's warning, and its log says it was warned
    assert "    trap 'torchx_replica_warned=SIGTERM' TERM" in script
    assert 'echo "[torchx] r/$SLURM_PROCID was warned ($torchx_replica_warned)' in script
    # the script's requeue kills it: nothing after it would run
    requeue = script.index('    scontrol requeue "$SLURM_JOB_ID"\n    exit 0')
    assert "StartTime" not in script[requeue:]


def test_no_warning_unless_asked_as_in_0_7() -> None:
    # 0.7's script asked for no signal: an app that does not checkpoint runs up to its
    # limit. 0 asks for none either (``@0`` would still come up to a minute early).
    for script in (_script(time="10"), _script(time="10", preempt_warning_seconds=0)):
        assert _sbatch(script) == []
        # a warning by hand (scancel --signal=USR1 --batch) is a preemption, never the limit
        assert f"torchx_preempt_before={2**31}" in script
        assert "trap torchx_warn USR1" in script


@pytest.mark.parametrize(
    ("cfg", "words"),
    [
        ({"time": "1", "preempt_warning_seconds": 90}, "not shorter than the time limit"),
        ({"time": "1", "preempt_warning_seconds": 60}, "give fewer seconds than 60"),
        ({"preempt_warning_seconds": -5}, "0 or more"),
        ({"preempt_warning_seconds": 70000}, "at most 65535"),
        ({"max_time_requeues": -1}, "0 or more"),
    ],
)
def test_bad_lead_times_and_caps_are_one_line_naming_the_option(
    cfg: dict[str, CfgVal], words: str
) -> None:
    with pytest.raises(SpecsError, match=words) as info:
        _script(**cfg)
    (option,) = [k for k in cfg if k != "time"]
    assert f"run option {option!r}" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 1800),
        ("5:30", 330),
        ("1:00:00", 3600),
        ("2-0", 172800),
        ("1-2:30", 95400),
        ("1-0:0:10", 86410),
        ("2-", 172800),
        ("UNLIMITED", None),
        ("-1", None),
        ("0", None),
        ("0-0:00", None),
    ],
)
def test_time_limits_read_as_sbatch_reads_them(text: str, seconds: int | None) -> None:
    assert time_limit_seconds(text) == seconds


@pytest.mark.parametrize("text", ["abc", "1h", "1:2:3:4", "-5", "-", "2--", "1.5"])
def test_a_time_sbatch_cannot_read_is_refused_in_the_dry_run(text: str) -> None:
    with pytest.raises(SpecsError) as info:
        _script(time=text)
    assert str(info.value).startswith(f"run option 'time': got {text!r}; write it as sbatch")
    for fine in ("UNLIMITED", "infinite", "0", "2-00:00:00", "-1", "2-"):
        _script(time=fine)


@pytest.mark.parametrize("text", ["0", "-1", "unlimited"])
def test_time_0_and_minus_1_are_no_limit_as_slurm_reads_them(text: str) -> None:
    # no limit: every warning is a preemption, and any lead fits
    script = _script(time=text, preempt_warning_seconds=120)
    assert f"#SBATCH --time={text}" in script
    assert _sbatch(script) == ["#SBATCH --signal=B:USR1@120"]
    assert f"torchx_preempt_before={2**31}" in script


def test_whole_days_are_a_time_limit() -> None:
    script = _script(time="2-", preempt_warning_seconds=120)
    assert "#SBATCH --time=2-" in script
    assert f"torchx_preempt_before={2 * 86400 - 120 - 60}" in script
