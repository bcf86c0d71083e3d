"""The component each trial of the search runs: examples/train/trainer.py with one setting.

Its typed arguments are what a sweep varies; the sweep checks every value against them
before anything is submitted:

    torchx run --sweep lr=0.01,0.05,0.2 --sweep hidden=4,16 --parallel 2 \\
        examples/hpo/trial.py:trial --steps 40
"""

from __future__ import annotations

from pathlib import Path

import torchx.specs as specs
from torchx.components.utils import python

TRAINER = str(Path(__file__).resolve().parents[1] / "train" / "trainer.py")


def trial(
    lr: float = 0.05,
    hidden: int = 16,
    steps: int = 100,
    batch_size: int = 64,
) -> specs.AppDef:
    """Trains the example classifier once; its run records val_loss (the objective).

    Args:
        lr: learning rate
        hidden: width of the hidden layer
        steps: training steps
        batch_size: examples per step
    """
    return python(
        "--steps", str(steps), "--lr", str(lr), "--hidden", str(hidden),
        "--batch_size", str(batch_size),
        script=TRAINER, name="trial",
    )  # fmt: skip
