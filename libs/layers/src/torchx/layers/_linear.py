"""Dense layers."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from ._errors import ShapeError
from ._layer import Stateless
from ._shapes import Shape, Shapes
from ._torch_layer import TorchLayer


class Linear(TorchLayer):
    """``nn.Linear`` with ``in_features`` taken from the last input dimension."""

    torch_cls = nn.Linear
    inferred = ("in_features",)
    ndims: ClassVar[tuple[int, ...] | None] = (2, 3, 4, 5, 6)
    layout = "(batch, ..., features)"

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"in_features": shapes[0][-1]}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return (*shapes[0][:-1], self.args["out_features"])


class Bilinear(TorchLayer):
    """``nn.Bilinear`` called on two inputs; both feature sizes are inferred."""

    torch_cls = nn.Bilinear
    inferred = ("in1_features", "in2_features")
    num_inputs = (2,)
    ndims: ClassVar[tuple[int, ...] | None] = (2, 3, 4, 5, 6)
    layout = "[(batch, ..., in1), (batch, ..., in2)]"

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"in1_features": shapes[0][-1], "in2_features": shapes[1][-1]}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        a, b = shapes
        if a[1:-1] != b[1:-1]:
            raise ShapeError(
                self._path(),
                "both inputs need the same leading dimensions",
                expected=f"(batch, {', '.join(map(str, a[1:-1]))}, in2)",
                got=b,
            )
        return (*a[:-1], self.args["out_features"])


class Identity(TorchLayer, Stateless):
    """Passes its input through."""

    torch_cls = nn.Identity

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]
