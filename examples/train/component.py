"""The trainer as a torchx component: ``dist.ddp`` over examples/train/trainer.py.

torchx run examples/train/component.py:trainer --checkpoint_dir /tmp/ckpt --tb_dir /tmp/tb
"""

from __future__ import annotations

from pathlib import Path

import torchx.specs as specs
from torchx.components.dist import ddp

TRAINER = str(Path(__file__).resolve().with_name("trainer.py"))


def trainer(
    checkpoint_dir: str,
    tb_dir: str = "",
    data: str = "",
    steps: int = 200,
    lr: float = 0.05,
    hidden: int = 16,
    save_every: int = 50,
    resume: str = "",
    step_delay: float = 0.0,
    j: str = "1x2",
    rdzv_port: int = 29500,
) -> specs.AppDef:
    """Trains the example classifier with DDP, checkpointing through fsspec.

    Args:
        checkpoint_dir: where checkpoints go (any fsspec URL)
        tb_dir: TensorBoard log dir (empty: none)
        data: the data set written by make_data.py (empty: synthesized in the app)
        steps: train until this global step
        lr: learning rate
        hidden: width of the hidden layers
        save_every: checkpoint every this many steps
        resume: a checkpoint file or folder to continue from (empty: start fresh)
        step_delay: seconds to pause each step (makes a demo run long enough to interrupt)
        j: nodes and processes per node, as for dist.ddp
        rdzv_port: the rendezvous port on the first node
    """
    args = [
        "--checkpoint_dir", checkpoint_dir,
        "--steps", str(steps),
        "--lr", str(lr),
        "--hidden", str(hidden),
        "--save_every", str(save_every),
        "--step_delay", str(step_delay),
    ]  # fmt: skip
    for flag, value in (("--tb_dir", tb_dir), ("--data", data), ("--resume", resume)):
        if value:
            args += [flag, value]
    return ddp(*args, script=TRAINER, name="trainer", j=j, rdzv_port=rdzv_port, cpu=1, memMB=1024)
