"""Symbolic tensors for the functional API: a shape and the call that produced it."""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from ._errors import ShapeError, format_shape
from ._meta import eval_on_meta
from ._shapes import Shape, as_shape, broadcast, probe

if TYPE_CHECKING:
    from ._layer import Layer

_node_ids = itertools.count()


@dataclass(eq=False)
class Op:
    """A tensor operation recorded on placeholders (arithmetic, indexing, reshaping)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    def function(self) -> Callable[..., Any]:
        return OPS[self.name](self.params)


@dataclass(eq=False)
class Node:
    """One call in a functional graph: a layer or an op applied to arguments.

    ``args`` holds placeholders and, for ops, plain constants (numbers).
    ``outputs`` mirrors the call's result: a placeholder, or a tuple/dict of them.
    """

    target: Layer | Op
    args: list[Any]
    outputs: Any = None
    order: int = field(default_factory=lambda: next(_node_ids))
    #: call keywords of a layer call: placeholders, tuples of them, or constants
    kwargs: dict[str, Any] = field(default_factory=dict)


_BinaryMethod = Callable[["Placeholder", Any], "Placeholder"]


def _arithmetic(op: str) -> tuple[_BinaryMethod, _BinaryMethod]:
    """The methods ``placeholder <op> other`` and ``other <op> placeholder``, recording ``op``."""

    def forward(self: Placeholder, other: Any) -> Placeholder:
        return apply_op(op, [self, other])

    def reflected(self: Placeholder, other: Any) -> Placeholder:
        return apply_op(op, [other, self])

    return forward, reflected


class Placeholder:
    """A symbolic tensor of a known shape; dimension 0 is the (free) batch size.

    ``Placeholder((None, 3, 32, 32))`` leaves the batch open; ``(8, 3, 32, 32)`` is
    accepted too (the batch stays free when the model later runs).
    """

    __slots__ = ("node", "shape")

    def __init__(self, shape: Sequence[int | None], *, _node: Node | None = None) -> None:
        # results of calls may carry the batch elsewhere (an RNN state is (layers, batch, h))
        self.shape: Shape = as_shape(shape) if _node is None else tuple(shape)
        self.node = _node

    def __repr__(self) -> str:
        return f"Placeholder({format_shape(self.shape)})"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    # arithmetic, with broadcasting and Python scalars
    __add__, __radd__ = _arithmetic("add")
    __sub__, __rsub__ = _arithmetic("sub")
    __mul__, __rmul__ = _arithmetic("mul")
    __truediv__, __rtruediv__ = _arithmetic("div")
    __matmul__, __rmatmul__ = _arithmetic("matmul")

    def __neg__(self) -> Placeholder:
        return apply_op("neg", [self])

    def __getitem__(self, index: Any) -> Placeholder:
        return apply_op("getitem", [self], index=encode_index(index))

    # reshaping; target shapes leave out the batch dimension, which is kept as is
    def flatten(self, start_dim: int = 1, end_dim: int = -1) -> Placeholder:
        return apply_op("flatten", [self], start_dim=start_dim, end_dim=end_dim)

    def reshape(self, *shape: Any) -> Placeholder:
        dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], Sequence) else shape
        return apply_op("reshape", [self], shape=list(dims))

    view = reshape

    def permute(self, *dims: Any) -> Placeholder:
        order = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], Sequence) else dims
        return apply_op("permute", [self], dims=list(order))

    def transpose(self, dim0: int, dim1: int) -> Placeholder:
        return apply_op("transpose", [self], dim0=dim0, dim1=dim1)


def concat(tensors: Sequence[Placeholder], dim: int = -1) -> Placeholder:
    """Concatenate placeholders along ``dim`` (a functional-API op)."""
    return apply_op("concat", list(tensors), dim=dim)


def stack(tensors: Sequence[Placeholder], dim: int = 1) -> Placeholder:
    """Stack placeholders along a new ``dim`` (a functional-API op)."""
    return apply_op("stack", list(tensors), dim=dim)


# --- op implementations: each takes its params and returns the runtime function ---


def _binary(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Callable[..., Any]]:
    return lambda params: fn


# The runtime functions of ops with constant parameters are C callables (partial,
# itemgetter, methodcaller): a model's forward calls them with no Python frame between.


def _getitem(params: dict[str, Any]) -> Callable[..., Any]:
    return operator.itemgetter(decode_index(params["index"]))


def _flatten(params: dict[str, Any]) -> Callable[..., Any]:
    return functools.partial(
        torch.flatten, start_dim=params["start_dim"], end_dim=params["end_dim"]
    )


def _reshape(params: dict[str, Any]) -> Callable[..., Any]:
    shape = tuple(params["shape"])
    return lambda x: x.reshape(x.shape[0], *shape)


def _permute(params: dict[str, Any]) -> Callable[..., Any]:
    return operator.methodcaller("permute", tuple(params["dims"]))


def _transpose(params: dict[str, Any]) -> Callable[..., Any]:
    return operator.methodcaller("transpose", params["dim0"], params["dim1"])


def _concat(params: dict[str, Any]) -> Callable[..., Any]:
    dim = params["dim"]
    return lambda *xs: torch.cat(xs, dim)


def _stack(params: dict[str, Any]) -> Callable[..., Any]:
    dim = params["dim"]
    return lambda *xs: torch.stack(xs, dim)


OPS: dict[str, Callable[[dict[str, Any]], Callable[..., Any]]] = {
    "add": _binary(operator.add),
    "sub": _binary(operator.sub),
    "mul": _binary(operator.mul),
    "div": _binary(operator.truediv),
    "matmul": _binary(operator.matmul),
    "neg": _binary(operator.neg),
    "getitem": _getitem,
    "flatten": _flatten,
    "reshape": _reshape,
    "permute": _permute,
    "transpose": _transpose,
    "concat": _concat,
    "stack": _stack,
}


def _touches_batch(name: str, params: dict[str, Any], ndim: int) -> bool:
    def norm(d: int) -> int:
        return d + ndim if d < 0 else d

    if name == "flatten":
        return norm(params["start_dim"]) == 0
    if name == "permute":
        return bool(params["dims"]) and norm(params["dims"][0]) != 0
    if name == "transpose":
        return 0 in (norm(params["dim0"]), norm(params["dim1"]))
    if name == "getitem":
        first = params["index"][0] if isinstance(params["index"], list) else params["index"]
        return bool(first not in ({"slice": [None, None, None]}, {"ellipsis": True}))
    if name == "concat":
        return norm(params["dim"]) == 0
    if name == "stack":
        return bool(params["dim"] == 0 or params["dim"] == -(ndim + 1))
    return False


def apply_op(name: str, args: list[Any], **params: Any) -> Placeholder:
    """Record ``name`` applied to ``args``; the result's shape is checked on meta tensors."""
    holders = [a for a in args if isinstance(a, Placeholder)]
    for a in args:
        if not isinstance(a, (Placeholder, int, float, bool)):
            raise TypeError(
                f"{name}: argument {a!r} of type {type(a).__name__} cannot be combined with a "
                "Placeholder; use a Placeholder or a Python number"
            )
    first = holders[0]
    if _touches_batch(name, params, first.ndim):
        raise ShapeError(
            name,
            f"{name} with {params} would change the batch dimension 0, which must stay first",
            got=first.shape,
        )
    fn = OPS[name](params)
    slots = [i for i, a in enumerate(args) if isinstance(a, Placeholder)]

    def call(*tensors: torch.Tensor) -> Any:
        full: list[Any] = list(args)
        for i, t in zip(slots, tensors, strict=True):
            full[i] = t
        return fn(*full)

    shapes = [h.shape for h in holders]
    formula = _FORMULAS.get(name)
    if formula:
        out = probe(lambda s: formula(s, params), shapes)
    else:
        out = eval_on_meta(call, shapes, name)
    if not isinstance(out, tuple):
        raise ShapeError(name, "an op must return a single tensor")
    node = Node(Op(name, params), list(args))
    result = Placeholder(out, _node=node)
    node.outputs = result
    return result


# Op shapes by formula: some ops (torch.cat) on the meta device first load torch's
# Python meta registrations, which takes seconds; getitem stays on meta (it is cheap).


def _norm(dim: int, ndim: int) -> int:
    return dim + ndim if dim < 0 else dim


def _mismatch(name: str, shapes: list[Shape], why: str) -> ShapeError:
    listed = ", ".join(format_shape(s) for s in shapes)
    return ShapeError(name, f"{why}: {listed}")


def _broadcast_formula(shapes: list[Shape], params: dict[str, Any]) -> Shape:
    out = broadcast(shapes)
    if out is None:
        raise _mismatch("elementwise op", shapes, "the shapes do not broadcast")
    return out


def _same_formula(shapes: list[Shape], params: dict[str, Any]) -> Shape:
    return shapes[0]


def _matmul_formula(shapes: list[Shape], params: dict[str, Any]) -> Shape:
    if len(shapes) == 1:
        raise ShapeError("matmul", "a Placeholder can only be multiplied with another Placeholder")
    a, b = shapes
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
        raise _mismatch("matmul", shapes, "inner dimensions do not match")
    lead = broadcast([a[:-2], b[:-2]]) if a[:-2] and b[:-2] else (a[:-2] or b[:-2])
    if lead is None:
        raise _mismatch("matmul", shapes, "the leading dimensions do not broadcast")
    return (*lead, a[-2], b[-1])


def _flatten_formula(shapes: list[Shape], params: dict[str, Any]) -> Shape:
    x = shapes[0]
    start, end = _norm(params["start_dim"], len(x)), _norm(params["end_dim"], len(x))
    size = 1
    for d in x[start : end + 1]:
        size *= int(d or 0)
    return (*x[:start], size, *x[end + 1 :])


def _reshape_formula(shapes: list[Shape], params: dict[str, Any]) -> Shape:
    x = shapes[0]
    numel = 1
    for d in x[1:]:
        numel *= int(d or 0)
    target = list(params["shape"])
    known = 1
    for d in target:
        known *= d if d != -1 else 1
    if target.count(-1) > 1 or known <= 0 or numel % known or (-1 not in target and known != numel):
        raise ShapeError(
            "reshape", f"{numel} elements per sample cannot be viewed as {tuple(target)}", got=x
        )
    return (x[0], *[numel // known if d == -1 else d for d in target])


def _permute_formula(shapes: list[Shape], params: dict[str, Any]) -> Shape:
    x = shapes[0]
    dims = [_norm(d, len(x)) for d in params["dims"]]
    if sorted(dims) != list(range(len(x))):
        raise ShapeError("permute", f"dims={params['dims']} is not a permutation", got=x)
    return tuple(x[d] for d in dims)


def _transpose_formula(shapes: list[Shape], params: dict[str, Any]) -> Shape:
    x = list(shapes[0])
    d0, d1 = _norm(params["dim0"], len(x)), _norm(params["dim1"], len(x))
    x[d0], x[d1] = x[d1], x[d0]
    return tuple(x)


def _concat_formula(shapes: list[Shape], params: dict[str, Any]) -> Shape:
    first = shapes[0]
    dim = _norm(params["dim"], len(first))
    for s in shapes[1:]:
        if len(s) != len(first) or any(
            i not in (0, dim) and a != b for i, (a, b) in enumerate(zip(first, s, strict=True))
        ):
            raise _mismatch("concat", shapes, f"shapes must match except in dimension {dim}")
    return (*first[:dim], sum(int(s[dim] or 0) for s in shapes), *first[dim + 1 :])


def _stack_formula(shapes: list[Shape], params: dict[str, Any]) -> Shape:
    first = shapes[0]
    if any(s != first for s in shapes):
        raise _mismatch("stack", shapes, "stacked shapes must be equal")
    dim = _norm(params["dim"], len(first) + 1)
    return (*first[:dim], len(shapes), *first[dim:])


_FORMULAS: dict[str, Callable[[list[Shape], dict[str, Any]], Shape]] = {
    "add": _broadcast_formula,
    "sub": _broadcast_formula,
    "mul": _broadcast_formula,
    "div": _broadcast_formula,
    "neg": _same_formula,
    "matmul": _matmul_formula,
    "flatten": _flatten_formula,
    "reshape": _reshape_formula,
    "permute": _permute_formula,
    "transpose": _transpose_formula,
    "concat": _concat_formula,
    "stack": _stack_formula,
}


def encode_index(index: Any) -> Any:
    """Turn an index into JSON-able data (slices, Ellipsis, None, ints)."""
    if isinstance(index, tuple):
        return [encode_index(i) for i in index]
    if isinstance(index, slice):
        return {"slice": [index.start, index.stop, index.step]}
    if index is Ellipsis:
        return {"ellipsis": True}
    if index is None or (isinstance(index, int) and not isinstance(index, bool)):
        return index
    raise TypeError(
        f"index={index!r}: a Placeholder can be indexed with ints, slices, None and ..."
    )


def decode_index(data: Any) -> Any:
    if isinstance(data, list):
        return tuple(decode_index(i) for i in data)
    if isinstance(data, dict):
        if "slice" in data:
            return slice(*data["slice"])
        if data.get("ellipsis"):
            return Ellipsis
    return data
