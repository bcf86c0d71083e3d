"""Resizing and reordering: Upsample, pixel (un)shuffle, channel shuffle."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import ClassVar

from torch import nn

from ._errors import ShapeError
from ._layer import Stateless
from ._shapes import Shape, Shapes, as_count, ntuple
from ._spatial import SpatialLayer
from ._torch_layer import TorchLayer

#: the modes nn.Upsample can run (those of torch.nn.functional.interpolate as of torch
#: 2.15, less 'lanczos') and the input rank each needs (None: any); torch checks the mode
#: only when called, with a message that hides a typo. Written out by hand: a mode a
#: newer torch adds is refused here until it is added.
_MODE_RANKS: dict[str, int | None] = {
    "nearest": None,
    "nearest-exact": None,
    "area": None,
    "linear": 3,
    "bilinear": 4,
    "bicubic": 4,
    "trilinear": 5,
}


class _UpsampleBase(TorchLayer, Stateless):
    ndims: ClassVar[tuple[int, ...] | None] = (3, 4, 5)
    layout = "(batch, channels, *spatial)"

    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        n = len(x) - 2
        mode = self.args.get("mode", "nearest")
        if mode == "lanczos":  # interpolate has it, but only with antialias=True
            raise ShapeError(
                self._path(),
                "mode='lanczos' needs antialias=True, which nn.Upsample does not take",
                hint="use mode='bicubic', or an L.Lambda calling "
                "torch.nn.functional.interpolate(x, ..., mode='lanczos', antialias=True)",
            )
        if mode not in _MODE_RANKS:
            raise ShapeError(
                self._path(),
                f"mode={mode!r} is not an interpolation mode",
                hint=f"write one of {', '.join(_MODE_RANKS)}",
            )
        rank = _MODE_RANKS[mode]
        if rank is not None and rank != len(x):
            raise ShapeError(
                self._path(),
                f"mode={mode!r} needs a {rank}-D input",
                got=x,
                hint="for this input use mode='nearest' or the mode of its rank (linear 3-D, "
                "bilinear/bicubic 4-D, trilinear 5-D)",
            )
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


class _PixelRearrange(SpatialLayer, Stateless):
    """Pixel (un)shuffle: ``r*r`` channels traded for a factor ``r`` of both H and W.

    One formula serves both directions: each of (channels, H, W) is scaled by a fraction
    of ``r``, and a size the scale does not divide evenly is a shape error.
    """

    spatial = 2
    factor_arg: ClassVar[str]  # the torch argument that holds ``r``
    into_space: ClassVar[bool]  # channels -> H, W (shuffle), or the inverse

    def _validate(self) -> None:
        # at construction: a factor below 1 would otherwise surface at the first call as a
        # division by zero or a misleading size error
        super()._validate()
        key = self.factor_arg
        r = as_count(self.args[key])
        if r is None:
            raise ValueError(
                f"L.{type(self).__name__}: {key}={self.args[key]!r}; expected an integer of "
                "at least 1 (not a bool)"
            )
        # stored as a plain int: the config is saved as JSON and the formula does maths on it
        self.args[key] = r
        if key in self._config:
            self._config[key] = r

    def _formula(self, shapes: list[Shape]) -> Shapes:
        b, *sizes = shapes[0]
        r = self.args[self.factor_arg]
        up, down = Fraction(r), Fraction(1, r)
        scales = (down * down, up, up) if self.into_space else (up * up, down, down)
        out = []
        for axis, size, scale in zip(("channels", "H", "W"), sizes, scales, strict=True):
            scaled = int(size or 0) * scale
            if scaled.denominator != 1:
                by = (
                    f"{self.factor_arg}={r}" if scale == down else f"{self.factor_arg}**2 = {r * r}"
                )
                raise ShapeError(
                    self._path(), f"{axis} ({size}) is not divisible by {by}", got=shapes[0]
                )
            out.append(int(scaled))
        return (b, *out)


class PixelShuffle(_PixelRearrange):
    """``(batch, C*r*r, H, W) -> (batch, C, H*r, W*r)``."""

    torch_cls = nn.PixelShuffle
    factor_arg = "upscale_factor"
    into_space = True


class PixelUnshuffle(_PixelRearrange):
    """``(batch, C, H*r, W*r) -> (batch, C*r*r, H, W)``."""

    torch_cls = nn.PixelUnshuffle
    factor_arg = "downscale_factor"
    into_space = False


class ChannelShuffle(TorchLayer, Stateless):
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
