"""``torchx status --watch`` in a real terminal (tmux): the status is redrawn in place, so
the screen holds one status at a time, until the app ends."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

TORCHX = str(Path(sys.executable).with_name("torchx"))

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


@pytest.fixture
def tmux() -> Iterator[list[str]]:
    """A private tmux server (its own socket), killed afterwards."""
    base = ["tmux", "-L", f"torchx-test-{uuid.uuid4().hex[:8]}"]
    yield base
    subprocess.run([*base, "kill-server"], capture_output=True, check=False)


def _start(script: str) -> str:
    proc = subprocess.run(
        [TORCHX, "run", "--no-wait", "utils.sh", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return proc.stdout.strip()


def _screen(tmux: list[str]) -> str:
    return subprocess.run(
        [*tmux, "capture-pane", "-p", "-t", "watch"], capture_output=True, text=True, check=True
    ).stdout


def _until(tmux: list[str], text: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = _screen(tmux)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never on the screen:\n{_screen(tmux)}")


def _gated(gate: Path) -> str:
    """A script that runs until ``gate`` exists: RUNNING is seen however slow the watcher starts."""
    return f"while [ ! -e {gate} ]; do sleep 0.05; done"


def test_watch_redraws_one_status_in_place_until_the_app_ends(
    tmux: list[str], tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    handle = _start(_gated(gate))
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in ("XDG_STATE_HOME", "PATH"))
    command = f"env {env} {TORCHX} status --watch --interval 0.2 {handle}; echo EXIT=$?; sleep 60"
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "watch", "-x", "100", "-y", "40", command], check=True
    )
    running = _until(tmux, "State: RUNNING")
    # a few redraws later the screen still holds one status, not one per redraw
    time.sleep(0.7)
    assert _screen(tmux).count("AppStatus:") == 1
    assert running.count("AppStatus:") == 1
    gate.touch()
    final = _until(tmux, "EXIT=0")
    assert final.count("AppStatus:") == 1
    assert "State: SUCCEEDED" in final and "State: RUNNING" not in final
    assert f"{handle}  (" in final and ", ended)" in final


def test_watch_into_a_pipe_prints_each_different_status_once(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    handle = _start(_gated(gate))
    with subprocess.Popen(
        [TORCHX, "status", "--watch", "--interval", "0.1", handle],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        seen = []
        try:  # let the app end once the watcher printed it running, then many polls pass
            while line := proc.stdout.readline():
                seen.append(line)
                if "State: RUNNING" in line:
                    break
            time.sleep(1)  # ~10 polls of an unchanged status, none of them printed
        finally:
            gate.touch()
        rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    stdout = "".join(seen) + rest
    assert "\x1b[" not in stdout
    states = [ln.strip() for ln in stdout.splitlines() if "State:" in ln]
    # a status is printed when it changes, not on each of the ~20 polls; the end comes last
    assert states[-1] == "State: SUCCEEDED" and "State: RUNNING" in states, states
    assert len(states) <= 3, states


SLOW_TRIAL = '''
import torchx.specs as specs


def trial(n: int) -> specs.AppDef:
    """Runs until the test lets it end.

    Args:
        n: which trial
    """
    script = "while [ ! -e GATE ]; do sleep 0.05; done"
    return specs.AppDef(
        "trial", roles=[specs.Role("t", image=".", entrypoint="bash", args=["-c", script])]
    )
'''


def test_watch_a_sweep_redraws_its_trials_until_all_ended(tmux: list[str], isolated: Path) -> None:
    gate = isolated / "gate"
    (isolated / "comp.py").write_text(SLOW_TRIAL.replace("GATE", str(gate)))
    proc = subprocess.run(
        [TORCHX, "run", "--no-wait", "--sweep", "n=1,2,3", "--parallel", "1", "comp.py:trial"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip()
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in ("XDG_STATE_HOME", "PATH"))
    command = f"env {env} {TORCHX} status --watch --interval 0.2 {handle}; echo EXIT=$?; sleep 60"
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "watch", "-x", "150", "-y", "40", command], check=True
    )
    _until(tmux, "RUNNING")
    gate.touch()  # the trials run until the watcher showed one running
    final = _until(tmux, "EXIT=0")
    assert final.count(f"{handle}  (") == 1  # one drawing on the screen
    assert ", ended)" in final and "RUNNING" not in final
    assert final.count("SUCCEEDED") >= 3
