"""Padding layers (zero, constant, reflection, replication, circular)."""

from __future__ import annotations

from torch import nn

from ._layer import Stateless
from ._shapes import Shape, Shapes, ntuple
from ._spatial import SpatialLayer
from ._torch_layer import TorchLayer


class _Pad(SpatialLayer, Stateless):
    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        n = self.spatial
        pads = ntuple(self.args["padding"], 2 * n, "padding")
        sizes = list(x)
        # torch lists padding from the last dimension backwards, (left, right) pairs
        for i in range(n):
            dim = len(x) - 1 - i
            sizes[dim] = int(x[dim] or 0) + pads[2 * i] + pads[2 * i + 1]
        return tuple(sizes)


def _pad(torch_cls: type[nn.Module], spatial: int) -> type[TorchLayer]:
    attrs = {
        "torch_cls": torch_cls,
        "spatial": spatial,
        "__doc__": f"``nn.{torch_cls.__name__}``.",
        "__module__": __name__,
        "__qualname__": torch_cls.__name__,
    }
    return type(torch_cls.__name__, (_Pad,), attrs)


ZeroPad1d = _pad(nn.ZeroPad1d, 1)
ZeroPad2d = _pad(nn.ZeroPad2d, 2)
ZeroPad3d = _pad(nn.ZeroPad3d, 3)
ConstantPad1d = _pad(nn.ConstantPad1d, 1)
ConstantPad2d = _pad(nn.ConstantPad2d, 2)
ConstantPad3d = _pad(nn.ConstantPad3d, 3)
ReflectionPad1d = _pad(nn.ReflectionPad1d, 1)
ReflectionPad2d = _pad(nn.ReflectionPad2d, 2)
ReflectionPad3d = _pad(nn.ReflectionPad3d, 3)
ReplicationPad1d = _pad(nn.ReplicationPad1d, 1)
ReplicationPad2d = _pad(nn.ReplicationPad2d, 2)
ReplicationPad3d = _pad(nn.ReplicationPad3d, 3)
CircularPad1d = _pad(nn.CircularPad1d, 1)
CircularPad2d = _pad(nn.CircularPad2d, 2)
CircularPad3d = _pad(nn.CircularPad3d, 3)
