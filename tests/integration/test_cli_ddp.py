"""``dist.ddp`` really trains: the example trainer under torchrun, 2 CPU processes, gloo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from torchx_test_fixtures_ports import free_loopback_port
from typer.testing import CliRunner

from torchx.cli._app import app

REPO_ROOT = Path(__file__).resolve().parents[2]
TRAINER = REPO_ROOT / "examples" / "cli" / "ddp_train.py"


@pytest.mark.slow
@pytest.mark.usefixtures("run_in_tmp_path")
def test_ddp_trains_on_two_local_cpu_processes(tmp_path: Path) -> None:
    out = tmp_path / "ranks"
    result = CliRunner().invoke(
        app,
        [
            "run", "dist.ddp", "-j", "2", "--rdzv_port", str(free_loopback_port()),
            "--script", str(TRAINER), "--", "--steps", "30", "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [r["rank"] for r in ranks] == [0, 1]
    assert all(r["world_size"] == 2 for r in ranks)
    # DDP averaged the gradients: both ranks hold the same weights, close to y = 3x + 1
    assert ranks[0]["weight"] == ranks[1]["weight"]
    assert abs(ranks[0]["weight"] - 3) < 0.2 and abs(ranks[0]["bias"] - 1) < 0.2
    # a waiting run streams the app's logs on stderr; stdout holds the handle alone
    assert "rank 1/2" in result.stderr and "rank 0/2" in result.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("run_in_tmp_path")
def test_two_single_node_ddp_apps_started_together_do_not_collide(tmp_path: Path) -> None:
    # Both use the default --rdzv_port: one node rendezvouses on a free port (localhost:0),
    # so neither app's store takes the other's port.
    from torchx.runner import get_runner
    from torchx.specs import AppState

    outs = [tmp_path / "a", tmp_path / "b"]
    with get_runner() as runner:
        handles = [
            runner.run_component(
                "dist.ddp",
                ["-j", "2", "--script", str(TRAINER), "--", "--steps", "5", "--out", str(out)],
            )
            for out in outs
        ]
        statuses = [runner.wait(h, wait_interval=0.2, timeout=300) for h in handles]
        logs = ["".join(runner.log_lines(h, "ddp_train", 0)) for h in handles]
    for status, log in zip(statuses, logs, strict=True):
        assert status is not None and status.state == AppState.SUCCEEDED, log
        assert "RendezvousConnectionError" not in log
    for out in outs:
        assert sorted(p.name for p in out.iterdir()) == ["rank0.json", "rank1.json"]
