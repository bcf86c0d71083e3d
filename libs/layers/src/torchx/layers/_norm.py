"""Normalization layers: the channel or feature count is inferred."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from ._errors import ShapeError
from ._layer import Stateless
from ._shapes import Shape, Shapes
from ._spatial import SpatialLayer
from ._torch_layer import TorchLayer


class _ChannelNorm(TorchLayer):
    inferred = ("num_features",)

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"num_features": shapes[0][1]}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]


class _SpatialNorm(_ChannelNorm, SpatialLayer):
    """A channel norm over ``(batch, channels, *spatial)`` input only."""


class BatchNorm1d(_ChannelNorm):
    torch_cls = nn.BatchNorm1d
    ndims: ClassVar[tuple[int, ...] | None] = (2, 3)
    layout = "(batch, features) or (batch, channels, L)"


class BatchNorm2d(_SpatialNorm):
    torch_cls = nn.BatchNorm2d
    spatial = 2


class BatchNorm3d(_SpatialNorm):
    torch_cls = nn.BatchNorm3d
    spatial = 3


class InstanceNorm1d(_SpatialNorm):
    torch_cls = nn.InstanceNorm1d
    spatial = 1


class InstanceNorm2d(_SpatialNorm):
    torch_cls = nn.InstanceNorm2d
    spatial = 2


class InstanceNorm3d(_SpatialNorm):
    torch_cls = nn.InstanceNorm3d
    spatial = 3


class _LastDimsNorm(TorchLayer):
    """Normalizes the last ``normalized_ndim`` dimensions (1: the feature axis)."""

    inferred = ("normalized_shape",)
    extras: ClassVar[dict[str, Any]] = {"normalized_ndim": 1}

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        n = self.args["normalized_ndim"]
        x = shapes[0]
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n < len(x):
            raise ShapeError(
                self._path(),
                f"normalized_ndim={n!r} must be an int from 1 to {len(x) - 1} for this input",
                got=x,
            )
        return {"normalized_shape": list(x[-n:])}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]


class LayerNorm(_LastDimsNorm):
    torch_cls = nn.LayerNorm


class RMSNorm(_LastDimsNorm):
    torch_cls = nn.RMSNorm


class GroupNorm(TorchLayer):
    """``nn.GroupNorm(num_groups)`` with ``num_channels`` from input dimension 1."""

    torch_cls = nn.GroupNorm
    inferred = ("num_channels",)
    ndims: ClassVar[tuple[int, ...] | None] = (2, 3, 4, 5)

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"num_channels": shapes[0][1]}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]


class LocalResponseNorm(TorchLayer, Stateless):
    torch_cls = nn.LocalResponseNorm
    ndims: ClassVar[tuple[int, ...] | None] = (3, 4, 5)

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]


class CrossMapLRN2d(TorchLayer, Stateless):
    """``nn.CrossMapLRN2d(size)``: local response normalization across channels, 4-D input."""

    torch_cls = nn.CrossMapLRN2d
    ndims: ClassVar[tuple[int, ...] | None] = (4,)
    layout = "(batch, channels, H, W)"

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]
