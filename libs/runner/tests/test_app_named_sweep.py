"""An app named ``sweep`` gets an id of a sweep's shape; the runner still treats it as
the app it is (real local_cwd apps)."""

from __future__ import annotations

from pathlib import Path

from torchx.runner import get_runner, recorded_sweep_id, sweep_id_of
from torchx.specs import AppDef, AppState, Role


def test_wait_each_and_wait_all_wait_on_an_app_named_sweep(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    waits = f"while [ ! -e {gate} ]; do sleep 0.05; done"
    with get_runner() as runner:
        handle = runner.run(
            AppDef("sweep", [Role("r", image="", entrypoint="sh", args=["-c", waits])]),
            "local_cwd",
        )
        assert sweep_id_of(handle) is not None  # the shape of a sweep's handle...
        assert recorded_sweep_id(handle) is None  # ...but no sweep of that id here
        try:
            # Cut short while the app waits for its gate: its own status, not "unknown".
            ((got, status),) = runner.wait_each([handle], timeout=0.2, wait_interval=0.05)
            assert got == handle
            assert status is not None and status.state in (AppState.PENDING, AppState.RUNNING)
        finally:
            gate.touch()
        assert runner.wait_all([handle], wait_interval=0.05)
