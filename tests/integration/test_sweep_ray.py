"""A sweep on a real Ray cluster (tests/fixtures/ray.py): one Ray job per trial under one
sweep handle, at most --parallel of them running.

The trials wait on a gate file the test creates, so the first two are still running when
the test looks for the third: the driver may not have submitted it, whatever the timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

TORCHX = Path(sys.executable).with_name("torchx")

COMPONENT = '''
import torchx.specs as specs


def trial(x: int, out: str) -> specs.AppDef:
    """Records when it started, waits for the test's gate, records when it ended.

    Args:
        x: the swept value
        out: folder for the records
    """
    script = (
        f'echo "$(date +%s.%N)" > {out}/$TORCHX_SWEEP_INDEX.start; '
        f'echo "$TORCHX_SWEEP_ARGS" > {out}/$TORCHX_SWEEP_INDEX.args; '
        f"for _ in $(seq 2400); do [ -e {out}/gate ] && break; sleep 0.1; done; "
        f'echo "$(date +%s.%N)" > {out}/$TORCHX_SWEEP_INDEX.end; '
        f"echo trial $TORCHX_SWEEP_INDEX x={x}"
    )
    return specs.AppDef(
        "trial", roles=[specs.Role("t", image="", entrypoint="bash", args=["-c", script])]
    )
'''


def _torchx(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "TORCHX_"))}
    return subprocess.run(
        [str(TORCHX), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _until(what: str, check: Any, timeout: float = 240) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.25)
    return value


def _most_at_once(out: Path, n: int) -> int:
    events = []
    for i in range(n):
        events.append((float((out / f"{i}.start").read_text()), 1))
        events.append((float((out / f"{i}.end").read_text()), -1))
    running = most = 0
    for _, step in sorted(events):  # an end before a start at the same instant
        running += step
        most = max(most, running)
    return most


@pytest.mark.slow
def test_ray_sweep_is_one_job_per_trial_at_most_two_running(
    ray_cluster: Any, tmp_path: Path
) -> None:
    (tmp_path / "comp.py").write_text(COMPONENT)
    out = tmp_path / "out"
    out.mkdir()
    cfg = f"address={ray_cluster.address}"
    sweep_args = ["--sweep", "x=10,20,30", "--parallel", "2", "comp.py:trial", "--out", str(out)]

    dry = _torchx(tmp_path, "run", "-s", "ray", "-cfg", cfg, "--dryrun", *sweep_args)
    assert dry.returncode == 0, dry.stderr
    assert "one app per trial, at most 2 running at once" in dry.stdout
    assert "JobSubmissionClient(" in dry.stdout and "submit_job" in dry.stdout

    run = _torchx(tmp_path, "run", "-s", "ray", "-cfg", cfg, *sweep_args)
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip()
    assert handle.startswith("ray://torchx/sweep-"), run.stdout

    def status() -> Any:
        done = _torchx(tmp_path, "status", "--json", handle)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    # The first two trials run and wait on the gate; the third must not be submitted.
    _until("two trials started", lambda: all((out / f"{i}.start").exists() for i in (0, 1)))
    waiting = status()
    assert [t["handle"] is not None for t in waiting["trials"]] == [True, True, False], waiting
    assert not (out / "2.start").exists()
    (out / "gate").touch()

    final = _until("the sweep ended", lambda: (s := status())["state"] != "RUNNING" and s)
    assert final["state"] == "SUCCEEDED", final
    trials = sorted(final["trials"], key=lambda t: t["index"])
    assert [(t["args"], t["state"], t["exit_code"]) for t in trials] == [
        ({"x": x}, "SUCCEEDED", 0) for x in ("10", "20", "30")
    ]
    # One Ray job per trial, each with its own handle that works as an app handle.
    handles = [t["handle"] for t in trials]
    assert len(set(handles)) == 3 and all(h.startswith("ray://torchx/") for h in handles)
    for i, x in enumerate(("10", "20", "30")):
        assert json.loads((out / f"{i}.args").read_text()) == {"x": x}
    assert _most_at_once(out, 3) == 2
    log = _torchx(tmp_path, "log", f"{handle}/2")
    assert "trial 2 x=30" in log.stdout, log.stderr
