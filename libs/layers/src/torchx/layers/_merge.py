"""Merge layers: combine a list of inputs into one tensor."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from ._errors import ShapeError, format_shape
from ._layer import Stateless
from ._modules import MergeModule
from ._shapes import Shape, Shapes, broadcast, normalize_dim
from ._torch_layer import TorchLayer


class _Merge(TorchLayer, Stateless):
    torch_cls = MergeModule
    mode: ClassVar[str]
    params: ClassVar[tuple[inspect.Parameter, ...] | None] = ()
    num_inputs = tuple(range(2, 65))

    def torch_kwargs(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"mode": self.mode}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        out = broadcast(shapes)
        if out is None:
            raise ShapeError(
                self._path(),
                "the input shapes do not broadcast: " + ", ".join(format_shape(s) for s in shapes),
                hint="make the shapes equal (or 1 where one should be repeated)",
            )
        return out


class Add(_Merge):
    mode = "add"


class Subtract(_Merge):
    mode = "subtract"
    num_inputs = (2,)


class Multiply(_Merge):
    mode = "multiply"


class Average(_Merge):
    mode = "average"


class Maximum(_Merge):
    mode = "maximum"


class Minimum(_Merge):
    mode = "minimum"


class Concat(_Merge):
    """Concatenate along ``dim`` (default: the last); other dimensions must match."""

    mode = "concat"
    params: ClassVar[tuple[inspect.Parameter, ...] | None] = (
        inspect.Parameter("dim", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=-1),
    )

    def torch_kwargs(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"mode": self.mode, "dim": self.args["dim"]}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        first = shapes[0]
        dim = normalize_dim(self.args["dim"], len(first))
        if dim == 0 or not 0 < dim < len(first):
            raise ShapeError(
                self._path(), f"dim={self.args['dim']} must be a non-batch dimension", got=first
            )
        for s in shapes[1:]:
            if len(s) != len(first) or any(
                i != dim and i != 0 and a != b
                for i, (a, b) in enumerate(zip(first, s, strict=True))
            ):
                raise ShapeError(
                    self._path(),
                    f"inputs must match in every dimension except {dim}",
                    expected=format_shape(first),
                    got=s,
                )
        size = sum(int(s[dim] or 0) for s in shapes)
        return (*first[:dim], size, *first[dim + 1 :])
