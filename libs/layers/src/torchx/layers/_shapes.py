"""Shape arithmetic shared by the layer formulas (pure integer maths, no tensors)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeAlias

#: A tensor shape; only the batch dimension (index 0) may be ``None`` (unknown).
Shape: TypeAlias = tuple[int | None, ...]
#: What a layer returns: one shape, or a (nested) list of them for several outputs.
Shapes: TypeAlias = Shape | list["Shapes"]


def ntuple(value: Any, n: int, field: str) -> tuple[Any, ...]:
    """Expand an int-or-sequence keyword to ``n`` values, as torch does."""
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return tuple(value) * n
        if len(value) != n:
            raise ValueError(f"{field}={value!r}: expected a single value or {n} values")
        return tuple(value)
    return (value,) * n


def conv_out(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def pool_out(
    size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool
) -> int:
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    if not ceil_mode:
        return span // stride + 1
    out = math.ceil(span / stride) + 1
    # torch drops a last window that would start entirely inside the right padding
    if (out - 1) * stride >= size + padding:
        out -= 1
    return out


def conv_transpose_out(
    size: int, kernel: int, stride: int, padding: int, dilation: int, output_padding: int
) -> int:
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1


def normalize_dim(dim: int, ndim: int) -> int:
    return dim + ndim if dim < 0 else dim


def broadcast(shapes: Sequence[Shape]) -> Shape | None:
    """Broadcast shapes as torch does, with ``None`` standing for the batch size."""
    ndim = max(len(s) for s in shapes)
    out: list[int | None] = []
    for i in range(ndim):
        dims = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def as_shape(value: Sequence[Any], field: str = "shape") -> Shape:
    """Validate a user-given shape: positive ints, the first one may be ``None``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{field}={value!r}: expected a tuple of ints such as (None, 3, 32, 32)")
    dims: list[int | None] = []
    for i, d in enumerate(value):
        if d is None and i == 0:
            dims.append(None)
            continue
        if isinstance(d, bool) or not isinstance(d, int) or d <= 0:
            raise ValueError(
                f"{field}={tuple(value)!r}: dimension {i} is {d!r}; every dimension must be a "
                "positive int (only the batch dimension 0 may be None)"
            )
        dims.append(d)
    if not dims:
        raise ValueError(f"{field}=(): a shape needs at least the batch dimension")
    return tuple(dims)


def is_shape(value: object) -> bool:
    return isinstance(value, tuple)


def leaves(shapes: Shapes) -> list[Shape]:
    if isinstance(shapes, tuple):
        return [shapes]
    return [leaf for s in shapes for leaf in leaves(s)]
