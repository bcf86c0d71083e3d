"""``summary()``: a table of output shapes and parameter counts, without a forward pass."""

from __future__ import annotations

from collections.abc import Sequence

from torch import nn

from ._errors import format_shape
from ._functional import Functional
from ._layer import Layer
from ._sequential import Sequential
from ._shapes import Shape, leaves


def _count(module: nn.Module, seen: set[int]) -> int:
    total = 0
    for p in module.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def summary(model: Layer, input_shape: Sequence[int | None] | None = None) -> str:
    """Each layer's output shape and parameter count, as a text table.

    An unbuilt model is built from ``input_shape`` first (batch first; ``None`` for
    a free batch). Nothing runs forward; shapes come from the layers' formulas.
    """
    if not model.built:
        if input_shape is None:
            raise ValueError(
                "input_shape=None: the model is not built yet, so summary needs its input "
                "shape, e.g. (None, 3, 32, 32)"
            )
        model.build(input_shape)
    model._materialize()
    rows: list[tuple[str, str, str, int]] = []
    seen: set[int] = set()
    _rows(model, model._label(), rows, seen)
    total = sum(r[3] for r in rows)
    header = ("layer", "type", "output shape", "params")
    widths = [max(len(header[i]), *(len(str(r[i])) for r in rows)) for i in range(4)]

    def line(r: Sequence[object]) -> str:
        return "  ".join(str(v).ljust(widths[i]) for i, v in enumerate(r)).rstrip()

    out = [line(header), "-" * (sum(widths) + 6)]
    out += [line(r) for r in rows]
    out.append("-" * (sum(widths) + 6))
    out.append(f"total params: {total:,}")
    return "\n".join(out)


def _fmt(shapes: list[Shape]) -> str:
    return ", ".join(format_shape(s) for s in shapes)


def _rows(layer: Layer, path: str, rows: list[tuple[str, str, str, int]], seen: set[int]) -> None:
    if isinstance(layer, Sequential):
        for i, item in enumerate(layer.items):
            where = f"{path}.{i}"
            module = layer._modules[str(i)] or item
            if isinstance(item, (Sequential, Functional)):
                _rows(item, where, rows, seen)
            elif isinstance(item, Layer):
                rows.append(
                    (
                        where,
                        type(item).__name__,
                        _fmt(leaves(item.output_shape)),
                        _count(module, seen),
                    )
                )
            else:
                shape = _fmt(leaves(layer.item_shapes[i]))
                rows.append((where, type(item).__name__, shape, _count(item, seen)))
        return
    if isinstance(layer, Functional):
        for name, kind, shapes, sub in layer.node_rows():
            where = f"{path}.{name}"
            if isinstance(sub, (Sequential, Functional)):
                _rows(sub, where, rows, seen)
            else:
                count = _count(sub.call_module(), seen) if sub is not None else 0
                rows.append((where, kind, _fmt(shapes), count))
        return
    rows.append((path, type(layer).__name__, _fmt(leaves(layer.output_shape)), _count(layer, seen)))
