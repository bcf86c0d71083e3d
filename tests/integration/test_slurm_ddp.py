"""``dist.ddp -j 2x1`` through the runner on the test Slurm cluster: two nodes, gloo on CPU.

What ``torchx run -s slurm dist.ddp -j 2x1 --script ...`` does: the component's torchrun
agents meet at replica 0's address (``${rank0_env}``, which the Slurm script sets from the
first node's ``NodeAddr``) and train one process per node.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from torchx_test_fixtures_ports import free_loopback_port

from torchx.runner import get_runner
from torchx.specs import AppState

REPO_ROOT = Path(__file__).resolve().parents[2]
TRAINER = REPO_ROOT / "examples" / "cli" / "ddp_train.py"


@pytest.mark.slow
def test_dist_ddp_trains_on_two_slurm_nodes(slurm_env: Any, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "ranks"
    job_dir = tmp_path / "job"
    runner = get_runner()
    handle = runner.run_component(
        "dist.ddp",
        [
            "--j", "2x1", "--cpu", "1", "--memMB", "600",
            "--rdzv_port", str(free_loopback_port()), "--env", "OMP_NUM_THREADS=1",
            "--script", str(TRAINER), "--", "--steps", "20", "--out", str(out),
        ],
        scheduler="slurm",
        cfg={"job_dir": str(job_dir), "partition": slurm_env.partition},
    )  # fmt: skip
    assert handle.startswith("slurm://")
    status = runner.wait(handle, timeout=240)
    assert status is not None
    logs = {p.name: p.read_text(errors="replace")[-2000:] for p in job_dir.glob("slurm-*")}
    assert status.state == AppState.SUCCEEDED, (status, logs)

    (role,) = status.roles
    assert [r.state for r in role.replicas] == [AppState.SUCCEEDED, AppState.SUCCEEDED]
    assert sorted(r.hostname for r in role.replicas) == ["node1", "node2"]
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [(r["rank"], r["world_size"], r["local_rank"]) for r in ranks] == [(0, 2, 0), (1, 2, 0)]
    # DDP averaged the gradients across the two nodes: the same weights on both
    assert ranks[0]["weight"] == ranks[1]["weight"]
    assert ranks[0]["bias"] == ranks[1]["bias"]
    # torchrun --tee prefixes each line with the process's local rank: "[0]:rank 0/2: ..."
    printed = sorted(
        line.split("]:", 1)[-1].split(":")[0]
        for k in (0, 1)
        for line in runner.log_lines(handle, role.role, k)
        if "rank " in line
    )
    assert printed == ["rank 0/2", "rank 1/2"]
