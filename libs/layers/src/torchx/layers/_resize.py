"""Resizing and reordering: Upsample, pixel (un)shuffle, channel shuffle."""

from __future__ import annotations

import math
from typing import ClassVar

from torch import nn

from ._errors import ShapeError
from ._shapes import Shape, Shapes, ntuple
from ._spatial import SpatialLayer
from ._torch_layer import TorchLayer


class _UpsampleBase(TorchLayer):
    ndims: ClassVar[tuple[int, ...] | None] = (3, 4, 5)
    layout = "(batch, channels, *spatial)"

    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        n = len(x) - 2
        size, scale = self.args["size"], self.args["scale_factor"]
        if size is not None:
            sizes = ntuple(size, n, "size")
        elif scale is not None:
            scales = ntuple(scale, n, "scale_factor")
            sizes = tuple(
                math.floor(int(s or 0) * float(f)) for s, f in zip(x[2:], scales, strict=True)
            )
        else:
            raise ShapeError(self._path(), "either size or scale_factor must be given")
        return (*x[:2], *sizes)


class Upsample(_UpsampleBase):
    torch_cls = nn.Upsample


class UpsamplingNearest2d(_UpsampleBase):
    torch_cls = nn.UpsamplingNearest2d
    ndims: ClassVar[tuple[int, ...] | None] = (4,)


class UpsamplingBilinear2d(_UpsampleBase):
    torch_cls = nn.UpsamplingBilinear2d
    ndims: ClassVar[tuple[int, ...] | None] = (4,)


class PixelShuffle(SpatialLayer):
    """``(batch, C*r*r, H, W) -> (batch, C, H*r, W*r)``."""

    torch_cls = nn.PixelShuffle
    spatial = 2

    def _formula(self, shapes: list[Shape]) -> Shapes:
        b, c, h, w = shapes[0]
        r = self.args["upscale_factor"]
        if int(c or 0) % (r * r):
            raise ShapeError(
                self._path(),
                f"channels {c} are not divisible by upscale_factor**2 = {r * r}",
                got=shapes[0],
            )
        return (b, int(c or 0) // (r * r), int(h or 0) * r, int(w or 0) * r)


class PixelUnshuffle(SpatialLayer):
    """``(batch, C, H*r, W*r) -> (batch, C*r*r, H, W)``."""

    torch_cls = nn.PixelUnshuffle
    spatial = 2

    def _formula(self, shapes: list[Shape]) -> Shapes:
        b, c, h, w = shapes[0]
        r = self.args["downscale_factor"]
        if int(h or 0) % r or int(w or 0) % r:
            raise ShapeError(
                self._path(), f"H and W must be divisible by downscale_factor={r}", got=shapes[0]
            )
        return (b, int(c or 0) * r * r, int(h or 0) // r, int(w or 0) // r)


class ChannelShuffle(TorchLayer):
    """``nn.ChannelShuffle(groups)`` on ``(batch, channels, ...)``; the shape is kept."""

    torch_cls = nn.ChannelShuffle
    ndims: ClassVar[tuple[int, ...] | None] = (3, 4, 5)
    layout = "(batch, channels, *spatial)"

    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        groups = self.args["groups"]
        if int(x[1] or 0) % groups:
            raise ShapeError(
                self._path(),
                f"{x[1]} channels do not split into groups={groups}",
                got=x,
                hint="pick groups that divide the channel count",
            )
        return x
