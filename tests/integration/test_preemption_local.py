"""Preemption on local_cwd, end to end: examples/train (a deterministic CPU training app
using torchx.runtime.preemption) is requeued twice in one run with `torchx requeue`,
checkpoints each time, resumes under the same handle, and ends with exactly the weights
of an uninterrupted run."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import torchx.runtime.preemption as preemption
from torchx.cli._app import app
from torchx.runner import get_runner
from torchx.schedulers import local_scheduler
from torchx.specs import AppDef, AppState, Role


def test_the_launcher_and_the_runtime_agree_on_the_contract() -> None:
    from torchx.schedulers._local_requeue import ASKED_FILE_ENV, ATTEMPT_ENV, REQUEUE_EXIT_CODE

    assert (REQUEUE_EXIT_CODE, ATTEMPT_ENV, ASKED_FILE_ENV) == (
        preemption.REQUEUE_EXIT_CODE,
        preemption.ATTEMPT_ENV,
        preemption.ASKED_FILE_ENV,
    )
    assert "max_requeues" in {k for k, _ in local_scheduler.create_scheduler("x").run_opts()}


@pytest.mark.slow
def test_requeued_twice_training_ends_with_the_weights_of_an_uninterrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, train_run: Any
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    train_run.start_reference()
    requeued = tmp_path / "requeued"
    role = Role(
        "trainer",
        image=str(tmp_path),
        entrypoint=sys.executable,
        args=train_run.args(requeued, 0.03),
    )
    with get_runner() as runner:
        handle = runner.run(
            AppDef("train", roles=[role]), "local_cwd", {"cancel_grace_seconds": 30}
        )

        def saved_after(step: int) -> None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                lines = list(runner.log_lines(handle, "trainer", 0))
                if any(
                    f"step {s}: saved" in line
                    for line in lines
                    for s in range(step, train_run.steps)
                ):
                    return
                time.sleep(0.1)
            raise AssertionError(f"no checkpoint after step {step}: {runner.status(handle)}")

        saved_after(20)
        first = CliRunner().invoke(app, ["requeue", handle])
        assert first.exit_code == 0, first.output
        assert f"requeued {handle} (preemption 1)" in first.output
        saved_after(80)
        status = runner.requeue(handle)
        assert status is not None and status.num_preemptions == 2
        status = runner.wait(handle, wait_interval=0.1)
        assert status is not None and status.state == AppState.SUCCEEDED, status
        assert (status.num_restarts, status.num_preemptions) == (0, 2)
        assert status.roles[0].replicas[0].attempt == 3
        log = "".join(runner.log_lines(handle, "trainer", 0))

    warned = [line for line in log.splitlines() if ": warned, saved" in line]
    assert len(warned) == 2, log
    assert log.count("[torchx] attempt ") == 2  # a marker before each new attempt
    assert log.count("resumed from ") == 2
    train_run.assert_same_weights(train_run.reference(), requeued)
