"""A Slurm sweep's array script and record, byte for byte as they were written before.

Making a sweep's request faster must not change what is submitted or recorded: the
script and the record of a sweep that exercises every part of them (two roles, macros,
quoting, per-trial and shared environment, shared arguments, a limit on parallel tasks)
are compared with the files in ``golden/``, the sweep's random id and the test's own
paths put back as placeholders. Regenerate them only for a deliberate change.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from torchx.runner import Sweep, get_runner
from torchx.runner._sweeps import plan

GOLDEN = Path(__file__).parent / "golden"

COMPONENT = '''
import torchx.specs as specs


def trial(lr: float, depth: int, note: str = "plain", fast: bool = False,
          tags: list[str] = ["a"], *rest: str) -> specs.AppDef:
    """Two roles whose arguments and environment hold the trial's values and macros.

    Args:
        lr: learning rate
        depth: layers
        note: free text
    """
    res = specs.Resource(cpu=2, gpu=0, memMB=512)
    trainer = specs.Role(
        "trainer", image="img", entrypoint="python",
        args=["-m", "train", f"--lr={lr}", f"--depth={depth}", note,
              "--out", f"{specs.macros.img_root}/out/{specs.macros.app_id}",
              "--rank", specs.macros.replica_id, *tags, *rest],
        env={"NOTE": note, "FAST": str(fast), "WHO": specs.macros.app_id,
             "SAME": "for every trial"},
        num_replicas=2, resource=res, max_retries=1,
    )
    reader = specs.Role(
        "reader", image="img", entrypoint="sh",
        args=["-c", f"echo {depth} $${{{specs.macros.rank0_env}}}"],
        env={"DEPTH": str(depth)}, resource=res,
    )
    return specs.AppDef("golden", roles=[trainer, reader])
'''


def _render(tmp: Path) -> str:
    """The script and record of the sweep, with what varies between runs replaced."""
    comp = tmp / "golden_component.py"
    comp.write_text(COMPONENT)
    os.environ.pop("TORCHX_PARENT_RUN_ID", None)
    sweep = Sweep.of(
        f"{comp}:trial",
        [
            {"lr": 0.1, "depth": 2},
            {"lr": 0.01, "depth": 3, "note": "it's $HOME\nand a 'second' line"},
            {"lr": 1e-3, "depth": 2, "fast": True},
            {"lr": 2, "depth": 12, "note": "x y", "fast": False},
        ],
        base_args=["--tags", "b,c", "--", "tail", "$PATH"],
        parallel=2,
    )
    cfg = {"job_dir": str(tmp / "jobs"), "partition": "debug", "time": "10"}
    p = plan(get_runner("golden"), sweep, "slurm", cfg, check_limits=False)
    record = p.record.to_json()
    record["created"] = 0
    request = p.request.request
    rest = repr(dataclasses.replace(request, script=""))
    text = f"{request.script}\n--- request\n{rest}\n--- record\n{json.dumps(record, indent=1)}"
    return text.replace(p.record.sweep_id, "SWEEP_ID").replace(str(tmp), "TMP")


def test_array_script_and_record_are_as_before(tmp_path: Path) -> None:
    rendered = _render(tmp_path)
    assert rendered == (GOLDEN / "slurm_sweep.txt").read_text()
    # the sweep reaches the script: each trial's own values, once each
    assert rendered.count("\n3)\n") == 1 and "--depth=12" in rendered
