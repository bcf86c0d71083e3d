"""torchx.runtime.preemption in real processes: a signal warns, the app checkpoints and
exits asking for a requeue; the attempt comes from the environment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from torchx_test_fixtures_imports import ModulesAfter

import torchx.runtime.preemption as preemption

POLLING_APP = """
import sys, time
import torchx.runtime.preemption as p
out = sys.argv[1]
step = 0
p.on_preempt(lambda: open(out, "w").write(f"{step} {p.warned_by().name}"))
p.preempted()  # polls from here on: a warning now waits for the loop
print("ready", flush=True)
while step < 10_000:
    step += 1
    time.sleep(0.01)
    if p.preempted():
        p.requeue()
"""

HANDLER_ONLY_APP = """
import sys, time
import torchx.runtime.preemption as p
out = sys.argv[1]
@p.on_preempt
def save():
    open(out, "w").write("saved")
try:
    print("ready", flush=True)
    time.sleep(60)
finally:
    open(out + ".finally", "w").write("ran")
"""


def _start(code: str, out: Path, **env: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), str(out)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGTERM])
def test_a_polling_loop_checkpoints_where_it_chooses_and_exits_asking_for_a_requeue(
    tmp_path: Path, sig: signal.Signals
) -> None:
    out = tmp_path / "ckpt"
    proc = _start(POLLING_APP, out)
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == preemption.REQUEUE_EXIT_CODE == 75
    step, name = out.read_text().split()
    assert int(step) >= 1
    assert name == sig.name


def test_without_polling_the_warning_itself_checkpoints_and_unwinds_the_app(
    tmp_path: Path,
) -> None:
    out = tmp_path / "ckpt"
    proc = _start(HANDLER_ONLY_APP, out)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 75
    assert out.read_text() == "saved"
    assert (tmp_path / "ckpt.finally").read_text() == "ran"  # unwound, not killed


def test_the_signals_listened_for_come_from_the_environment(tmp_path: Path) -> None:
    out = tmp_path / "ckpt"
    proc = _start(POLLING_APP, out, TORCHX_PREEMPT_SIGNALS="usr2")
    proc.send_signal(signal.SIGUSR2)
    assert proc.wait(timeout=30) == 75
    assert out.read_text().split()[1] == "SIGUSR2"


def test_requeue_without_a_warning_still_asks_to_run_again(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torchx.runtime.preemption as p; p.on_preempt(lambda: print('ckpt')); "
            "p.requeue()",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (75, "ckpt\n")


def test_attempt_reads_the_scheduler_s_variable_then_slurm_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TORCHX_ATTEMPT", raising=False)
    monkeypatch.delenv("SLURM_RESTART_COUNT", raising=False)
    assert preemption.attempt() == 0
    monkeypatch.setenv("SLURM_RESTART_COUNT", "2")
    assert preemption.attempt() == 2
    monkeypatch.setenv("TORCHX_ATTEMPT", "3")
    assert preemption.attempt() == 3


def test_attempt_reads_the_file_a_restarted_container_is_given_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TORCHX_ATTEMPT", "0")
    monkeypatch.setenv("TORCHX_ATTEMPT_FILE", str(tmp_path / "attempt"))
    assert preemption.attempt() == 0  # no file yet: the first run
    (tmp_path / "attempt").write_text("2\n")
    assert preemption.attempt() == 2
    (tmp_path / "attempt").write_text("two")
    with pytest.raises(ValueError, match="not a whole number") as info:
        preemption.attempt()
    assert str(tmp_path / "attempt") in str(info.value) and "TORCHX_ATTEMPT_FILE" in str(info.value)


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("TORCHX_ATTEMPT", "two", "not a whole number"),
        ("TORCHX_ATTEMPT", "-1", "negative"),
    ],
)
def test_a_bad_attempt_variable_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, words: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=words) as info:
        preemption.attempt()
    assert name in str(info.value) and "\n" not in str(info.value)


def test_a_bad_signal_name_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TORCHX_PREEMPT_SIGNALS", "USR1,BOGUS")
    with pytest.raises(ValueError, match=r"TORCHX_PREEMPT_SIGNALS.*'BOGUS'"):
        preemption.warning_signals()
    monkeypatch.setenv("TORCHX_PREEMPT_SIGNALS", "USR1, term")
    assert preemption.warning_signals() == (signal.SIGUSR1, signal.SIGTERM)


def test_it_imports_nothing_else_of_torchx(modules_after: ModulesAfter) -> None:
    loaded = modules_after("import torchx.runtime.preemption")
    assert sorted(
        m
        for m in loaded
        if m.startswith("torchx.") and not m.startswith("torchx.runtime.preemption")
    ) == ["torchx.runtime"]


def test_requeue_creates_the_file_the_scheduler_names(tmp_path: Path) -> None:
    asked = tmp_path / "asked-0"
    done = subprocess.run(
        [sys.executable, "-c", "import torchx.runtime.preemption as p; p.requeue()"],
        env={**os.environ, preemption.ASKED_FILE_ENV: str(asked)},
        check=False,
    )
    assert done.returncode == 75 and asked.exists()
