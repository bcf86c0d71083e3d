"""``Fold`` and ``Unfold``: sliding blocks to columns and back."""

from __future__ import annotations

import math
from typing import ClassVar

from torch import nn

from ._errors import ShapeError
from ._layer import Stateless
from ._shapes import Shape, Shapes, conv_out, ntuple
from ._spatial import SpatialLayer
from ._torch_layer import TorchLayer


class _Blocks(TorchLayer, Stateless):
    def _window(self) -> tuple[tuple[int, ...], ...]:
        a = self.args
        return (
            ntuple(a["kernel_size"], 2, "kernel_size"),
            ntuple(a["dilation"], 2, "dilation"),
            ntuple(a["padding"], 2, "padding"),
            ntuple(a["stride"], 2, "stride"),
        )

    def _blocks(self, sizes: tuple[int, ...]) -> int:
        kernel, dilation, padding, stride = self._window()
        return math.prod(
            conv_out(s, k, st, p, d)
            for s, k, d, p, st in zip(sizes, kernel, dilation, padding, stride, strict=True)
        )


class Unfold(_Blocks, SpatialLayer):
    """``nn.Unfold``: ``(batch, C, H, W)`` -> ``(batch, C * kh * kw, blocks)``."""

    torch_cls = nn.Unfold
    spatial = 2

    def _formula(self, shapes: list[Shape]) -> Shapes:
        b, c, h, w = shapes[0]
        kernel = self._window()[0]
        return (b, int(c or 0) * math.prod(kernel), self._blocks((int(h or 0), int(w or 0))))


class Fold(_Blocks):
    """``nn.Fold(output_size, kernel_size)``: ``(batch, C * kh * kw, blocks)`` ->
    ``(batch, C, *output_size)``; ``blocks`` must be the count that fits ``output_size``."""

    torch_cls = nn.Fold
    ndims: ClassVar[tuple[int, ...] | None] = (3,)
    layout = "(batch, channels * kernel_h * kernel_w, blocks)"

    def _formula(self, shapes: list[Shape]) -> Shapes:
        b, columns, blocks = shapes[0]
        size = ntuple(self.args["output_size"], 2, "output_size")
        per_block = math.prod(self._window()[0])
        want = self._blocks(size)
        if int(columns or 0) % per_block or blocks != want:
            raise ShapeError(
                self._path(),
                f"Fold to {size} with kernel {self._window()[0]} needs dimension 1 to be a "
                f"multiple of {per_block} and {want} blocks in dimension 2",
                expected=f"(batch, C * {per_block}, {want})",
                got=shapes[0],
            )
        return (b, int(columns or 0) // per_block, *size)
