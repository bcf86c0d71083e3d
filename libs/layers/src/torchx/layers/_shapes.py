"""Shape arithmetic shared by the layer formulas (pure integer maths, no tensors)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

#: A tensor shape; ``None`` is a size not known before the call (always so for the
#: batch, dimension 0; elsewhere e.g. a variable sequence length).
Shape: TypeAlias = tuple[int | None, ...]
#: What a layer returns: one shape, or a (nested) list of them for several outputs.
Shapes: TypeAlias = Shape | list["Shapes"]


def ntuple(value: Any, n: int, field: str) -> tuple[Any, ...]:
    """Expand an int-or-sequence keyword to ``n`` values, as torch does."""
    if type(value) is int:  # the common case, first
        return (value,) * n
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return tuple(value) * n
        if len(value) != n:
            raise ValueError(f"{field}={value!r}: expected a single value or {n} values")
        return tuple(value)
    if isinstance(value, str):
        # a word where sizes belong (padding='same' on a pooling layer): say so here,
        # not as a failed sum of an int and a str in the formula that reads it
        raise ValueError(f"{field}={value!r}: expected a single value or {n} values, not a string")
    return (value,) * n


def as_count(value: object, least: int = 1) -> int | None:
    """``value`` as a plain int when it is an integer of at least ``least``, else None.

    An integer is whatever ``operator.index`` takes, as torch takes it: a Python int, a
    numpy integer, a one-element integer tensor (a factor read from a numpy grid or a
    config). A bool, or a tensor or array of bools, is a flag and never a size.
    """
    if isinstance(value, bool) or "bool" in str(getattr(value, "dtype", "")):
        return None
    try:
        n = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None
    return n if n >= least else None


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
    """Validate a user-given shape: positive ints or ``None`` (a size known only at call)."""
    # the shapes passed from layer to layer while a model builds are already such
    # tuples; checking them is all this does for them, without building a copy
    if type(value) is tuple and value:
        for d in value:
            if d is not None and (type(d) is not int or d <= 0):
                break
        else:
            return value
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{field}={value!r}: expected a tuple of ints such as (None, 3, 32, 32)")
    dims: list[int | None] = []
    for i, d in enumerate(value):
        if d is None:
            dims.append(None)
            continue
        if isinstance(d, bool) or not isinstance(d, int) or d <= 0:
            raise ValueError(
                f"{field}={tuple(value)!r}: dimension {i} is {d!r}; every dimension must be a "
                "positive int, or None for a size known only when the model runs"
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


# Shape formulas are integer functions of the input sizes. A non-batch size given as
# None is filled in with each of these stand-ins in turn; an output size that comes
# out different in the two runs depends on the unknown size and is unknown (None)
# too, one that comes out equal does not depend on it. Both are multiples of 1..10,
# so divisibility checks (GLU, PixelShuffle, groups) pass on them.
PROBES = (5040, 10080)


def fixed_features(shape: Shape) -> tuple[int, ...] | None:
    """The sizes of ``shape`` after its batch axis when every one is fixed, which a call
    compares in one step (``x.shape[1:] != features``); None when one is free, or when
    there are none: a (batch,) shape's () would also match a 0-d tensor's shape[1:]."""
    features = tuple(shape[1:])
    if not features or None in features:
        return None
    return features  # type: ignore[return-value]


def has_unknown(shapes: Sequence[Shape]) -> bool:
    """Whether a size other than the batch (dimension 0) is None."""
    if len(shapes) == 1:
        return None in shapes[0][1:]
    return any(None in s[1:] for s in shapes)


def fill_unknown(shapes: Sequence[Shape], value: int) -> list[Shape]:
    return [(s[0], *(value if d is None else d for d in s[1:])) for s in shapes]


def merge_probes(a: Shapes, b: Shapes) -> Shapes:
    """Sizes equal in both probe runs, None where they differ."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(x if x == y else None for x, y in zip(a, b, strict=True))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [merge_probes(x, y) for x, y in zip(a, b, strict=True)]
    raise ValueError("the output structure depends on an unknown (None) size")


def probe(fn: Callable[[list[Shape]], Shapes], shapes: Sequence[Shape]) -> Shapes:
    """``fn(shapes)``, with unknown non-batch sizes worked out by the two probe runs."""
    if not has_unknown(shapes):
        return fn(list(shapes))
    try:
        return merge_probes(
            fn(fill_unknown(shapes, PROBES[0])), fn(fill_unknown(shapes, PROBES[1]))
        )
    except ValueError as e:
        note = (
            f" (sizes given as None were tried as {PROBES[0]} and {PROBES[1]}; "
            "give them a size if this layer depends on them)"
        )
        e.args = (f"{e.args[0]}{note}", *e.args[1:]) if e.args else (note,)
        raise
