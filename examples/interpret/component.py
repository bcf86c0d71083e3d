"""The interpret app as a torchx component.

torchx run examples/interpret/component.py:interpret --checkpoint /tmp/ckpt --out /tmp/attr
"""

from __future__ import annotations

from pathlib import Path

import torchx.specs as specs
from torchx.components.utils import python

SCRIPT = str(Path(__file__).resolve().with_name("interpret.py"))


def interpret(checkpoint: str, out: str, samples: int = 16) -> specs.AppDef:
    """Writes captum feature attributions of a trained checkpoint as PNG, HTML and JSON.

    Args:
        checkpoint: a checkpoint file or folder written by the train example (any fsspec URL)
        out: the folder to write attributions.png, attributions.html and attributions.json to
        samples: how many inputs to attribute
    """
    return python(
        "--checkpoint", checkpoint, "--out", out, "--samples", str(samples),
        script=SCRIPT, name="interpret",
    )  # fmt: skip
