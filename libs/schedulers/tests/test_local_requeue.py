"""Requeues on local_cwd with real processes: an app that exits with code 75 is started
again without spending a retry (up to ``max_requeues``), and ``requeue()`` warns every
replica with SIGTERM, then starts them again under the same app id."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers import Stream
from torchx.schedulers.local_scheduler import LocalScheduler
from torchx.specs import AppDef, AppState, Role, SpecsError, is_terminal


@pytest.fixture
def scheduler(tmp_path: Path) -> Iterator[LocalScheduler]:
    s = LocalScheduler("requeue", state_dir=tmp_path / "state")
    yield s
    for app in s.list():
        s.cancel(app.app_id)
    s.close()


def sh(script: str, replicas: int = 1, max_retries: int = 0) -> AppDef:
    role = Role(
        "trainer",
        image="",
        entrypoint="bash",
        args=["-c", script],
        num_replicas=replicas,
        max_retries=max_retries,
    )
    return AppDef("requeue", roles=[role])


def run(s: LocalScheduler, app: AppDef, **cfg: Any) -> str:
    return s.schedule(s.submit_dryrun(app, cfg))


def log(s: LocalScheduler, app_id: str, k: int = 0) -> list[str]:
    return [line.rstrip("\n") for line in s.log_iter(app_id, "trainer", k, streams=Stream.STDOUT)]


def test_an_app_that_exits_75_is_run_again_without_spending_a_retry(
    scheduler: LocalScheduler,
) -> None:
    app_id = run(
        scheduler, sh('echo "attempt $TORCHX_ATTEMPT"; [ "$TORCHX_ATTEMPT" = 1 ] || exit 75')
    )
    desc = scheduler.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert (desc.num_restarts, desc.num_preemptions) == (0, 1)
    assert desc.roles_statuses[0].replicas[0].attempt == 2
    lines = log(scheduler, app_id)
    assert lines[0] == "attempt 0" and lines[-1] == "attempt 1"
    # the attempt marker (into the combined log) separates the two runs
    combined = list(scheduler.log_iter(app_id, "trainer", 0))
    assert any("attempt 2 of trainer/0 starts" in line for line in combined), combined
    status = desc.to_status().format()
    assert "Num Restarts: 0" in status and "Num Preemptions: 1" in status


def test_an_app_whose_launcher_rewrites_75_still_asks_through_the_file(
    scheduler: LocalScheduler,
) -> None:
    # torchrun turns its workers' 75 into 1; requeue() creates this file first
    app_id = run(
        scheduler,
        sh(
            'echo "attempt $TORCHX_ATTEMPT"; [ "$TORCHX_ATTEMPT" = 1 ] && exit 0; '
            ': > "$TORCHX_REQUEUE_ASKED_FILE"; exit 1'
        ),
    )
    desc = scheduler.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert (desc.num_restarts, desc.num_preemptions) == (0, 1)
    assert log(scheduler, app_id) == ["attempt 0", "attempt 1"]


def test_past_max_requeues_the_app_fails_saying_why(scheduler: LocalScheduler) -> None:
    app_id = run(scheduler, sh("exit 75", max_retries=3), max_requeues=2)
    desc = scheduler.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.FAILED
    assert "asked for a requeue (exit code 75) after 2 requeue(s)" in desc.msg
    assert "'max_requeues' (2)" in desc.msg
    # requeues are not retries: the three retries were never used
    assert (desc.num_restarts, desc.num_preemptions) == (0, 2)
    assert desc.roles_statuses[0].replicas[0].attempt == 3


TRAP_APP = """
trap 'echo "warned in attempt $TORCHX_ATTEMPT"; exit 75' TERM
if [ "$TORCHX_ATTEMPT" = 1 ]; then echo resumed; exit 0; fi
echo ready
while :; do sleep 0.05; done
"""


def wait_ready(s: LocalScheduler, app_id: str, replicas: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if all("ready" in log(s, app_id, k) for k in range(replicas)):
            return
        time.sleep(0.05)
    raise AssertionError(f"replicas did not start: {s.describe(app_id)}")


def test_requeue_warns_every_replica_and_starts_them_again_under_the_same_id(
    scheduler: LocalScheduler,
) -> None:
    app_id = run(scheduler, sh(TRAP_APP, replicas=2))
    wait_ready(scheduler, app_id, 2)
    desc = scheduler.requeue(app_id)
    assert desc.app_id == app_id and desc.num_preemptions == 1
    desc = scheduler.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert desc.num_restarts == 0
    for k in range(2):
        assert log(scheduler, app_id, k) == ["ready", "warned in attempt 0", "resumed"]
        assert desc.roles_statuses[0].replicas[k].attempt == 2


SLOW_CHECKPOINT_APP = """
trap 'echo "saving"; sleep 30' TERM
if [ "$TORCHX_ATTEMPT" = 1 ]; then echo resumed; exit 0; fi
echo ready
while :; do sleep 0.05; done
"""


def test_a_checkpoint_longer_than_the_grace_is_said_to_be_killed(
    scheduler: LocalScheduler,
) -> None:
    app_id = run(scheduler, sh(SLOW_CHECKPOINT_APP), cancel_grace_seconds=0.5)
    wait_ready(scheduler, app_id, 1)
    desc = scheduler.requeue(app_id)
    why = (
        "trainer/0 did not exit within cancel_grace_seconds (0.5s) of the requeue's SIGTERM "
        "and was killed; its checkpoint may be incomplete"
    )
    assert why in desc.msg, desc
    desc = scheduler.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    combined = [line.rstrip("\n") for line in scheduler.log_iter(app_id, "trainer", 0)]
    killed = next(i for i, line in enumerate(combined) if why in line)
    # in the log of the attempt that was killed, before the next one starts
    assert combined[killed].startswith("[torchx] ") and "saving" in combined[:killed]
    assert "attempt 2 of trainer/0 starts" in combined[killed + 1], combined


def test_a_cancel_while_the_app_checkpoints_for_a_requeue_starts_nothing(
    scheduler: LocalScheduler,
) -> None:
    # the checkpoint takes 1 s of the 5 s grace; the cancel comes during it
    app_id = run(scheduler, sh(TRAP_APP.replace("exit 75", "echo saving; sleep 1; exit 75")))
    wait_ready(scheduler, app_id, 1)
    errors: list[BaseException] = []

    def requeue() -> None:
        try:
            scheduler.requeue(app_id)
        except BaseException as e:  # handed to the test's thread
            errors.append(e)

    thread = threading.Thread(target=requeue)
    thread.start()
    deadline = time.monotonic() + 30
    while "saving" not in log(scheduler, app_id):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    scheduler.cancel(app_id)
    thread.join(timeout=60)
    desc = scheduler.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.CANCELLED, desc
    assert desc.num_preemptions == 0 and desc.roles_statuses[0].replicas[0].attempt == 1
    assert "resumed" not in log(scheduler, app_id)
    assert [str(e) for e in errors] == [
        f"local_cwd: app {app_id!r} was cancelled while being requeued; it was not started "
        "again; `torchx run` it again to start it anew"
    ]


def test_requeue_refuses_an_ended_or_unknown_app_in_one_line(scheduler: LocalScheduler) -> None:
    app_id = run(scheduler, sh("true"))
    desc = scheduler.wait(app_id, timeout=60)
    assert desc is not None and is_terminal(desc.state)
    with pytest.raises(SpecsError, match="has ended \\(SUCCEEDED\\); only a running app") as e:
        scheduler.requeue(app_id)
    assert "\n" not in str(e.value)
    with pytest.raises(SpecsError, match="no such local_cwd app"):
        scheduler.requeue("nope-123")


@pytest.mark.parametrize("cap", [-1, -10])
def test_a_cap_below_zero_is_refused_at_dryrun_in_one_line(
    scheduler: LocalScheduler, cap: object
) -> None:
    with pytest.raises(SpecsError, match="run option 'max_requeues'") as e:
        scheduler.submit_dryrun(sh("true"), {"max_requeues": cap})
    assert "0 or more" in str(e.value) and "\n" not in str(e.value)
