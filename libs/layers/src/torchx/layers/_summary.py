"""``summary()``: a table of output shapes and parameter counts, without a forward pass.

Each container lists its own rows (``Layer._summary_rows``), so this module needs no
layer class and every layer module may import it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from torch import nn

from ._errors import format_shape
from ._shapes import Shape

if TYPE_CHECKING:
    from ._layer import Layer

#: (path, type, output shapes, parameters, trainable parameters)
Row = tuple[str, str, str, int, int]


def count(module: nn.Module, seen: set[int]) -> tuple[int, int]:
    """Scalar parameters of ``module`` not counted before, and how many of them train."""
    total = trainable = 0
    for p in module.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
            if p.requires_grad:
                trainable += p.numel()
    return total, trainable


def format_shapes(shapes: list[Shape]) -> str:
    return ", ".join(format_shape(s) for s in shapes)


def summary(model: Layer, input_shape: Sequence[int | None] | None = None) -> str:
    """Each layer's output shape and parameter count, as a text table, and the totals.

    An unbuilt model is built from ``input_shape`` first (batch first; ``None`` for
    a free batch). Nothing runs forward; shapes come from the layers' formulas.
    Parameters with ``requires_grad=False`` are the non-trainable ones (buffers such
    as BatchNorm's running statistics are not parameters and are not counted).
    """
    if not model.built:
        if input_shape is None:
            raise ValueError(
                "input_shape=None: the model is not built yet, so summary needs its input "
                "shape, e.g. (None, 3, 32, 32)"
            )
        model.build(input_shape)
    model._materialize()
    rows: list[Row] = []
    model._summary_rows(model._label(), rows, set())
    total = sum(r[3] for r in rows)
    trainable = sum(r[4] for r in rows)
    header = ("layer", "type", "output shape", "params")
    cells = [(r[0], r[1], r[2], f"{r[3]:,}") for r in rows]
    widths = [max(len(header[i]), *(len(c[i]) for c in cells)) for i in range(4)]

    def line(r: Sequence[str]) -> str:
        return "  ".join(v.ljust(widths[i]) for i, v in enumerate(r)).rstrip()

    rule = "-" * (sum(widths) + 6)
    return "\n".join(
        [
            line(header),
            rule,
            *(line(c) for c in cells),
            rule,
            f"total params: {total:,}",
            f"trainable params: {trainable:,}",
            f"non-trainable params: {total - trainable:,}",
        ]
    )
