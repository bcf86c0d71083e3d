"""Pooling: max, average, adaptive, power-average (LP) and fractional max."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from ._layer import TorchLayer
from ._shapes import Shape, Shapes, ntuple, pool_out

_LAYOUTS = {
    1: "(batch, channels, L)",
    2: "(batch, channels, H, W)",
    3: "(batch, channels, D, H, W)",
}


class _Pool(TorchLayer):
    spatial: ClassVar[int]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "spatial"):
            cls.ndims = (cls.spatial + 2,)
            cls.layout = _LAYOUTS[cls.spatial]

    def _indices(self, out: Shape) -> Shapes:
        return [out, out] if self.args.get("return_indices") else out

    def _window(self, shapes: list[Shape], padding: Any, dilation: Any) -> Shape:
        x, n = shapes[0], self.spatial
        kernel = ntuple(self.args["kernel_size"], n, "kernel_size")
        stride_arg = self.args["stride"]
        stride = (
            kernel if stride_arg is None or stride_arg == [] else ntuple(stride_arg, n, "stride")
        )
        pads = ntuple(padding, n, "padding")
        dils = ntuple(dilation, n, "dilation")
        ceil = bool(self.args["ceil_mode"])
        sizes = tuple(
            pool_out(int(s or 0), k, st, p, d, ceil)
            for s, k, st, p, d in zip(x[2:], kernel, stride, pads, dils, strict=True)
        )
        return (*x[:2], *sizes)


class _MaxPool(_Pool):
    def _formula(self, shapes: list[Shape]) -> Shapes:
        return self._indices(self._window(shapes, self.args["padding"], self.args["dilation"]))


class _AvgPool(_Pool):
    def _formula(self, shapes: list[Shape]) -> Shapes:
        return self._window(shapes, self.args["padding"], 1)


class _LPPool(_Pool):
    def _formula(self, shapes: list[Shape]) -> Shapes:
        return self._window(shapes, 0, 1)


class _AdaptivePool(_Pool):
    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        wanted = ntuple(self.args["output_size"], self.spatial, "output_size")
        sizes = tuple(s if w is None else w for s, w in zip(x[2:], wanted, strict=True))
        return self._indices((*x[:2], *sizes))


class _FractionalMaxPool(_Pool):
    def _formula(self, shapes: list[Shape]) -> Shapes:
        x, n = shapes[0], self.spatial
        if self.args["output_size"] is not None:
            sizes = ntuple(self.args["output_size"], n, "output_size")
        else:
            ratios = ntuple(self.args["output_ratio"], n, "output_ratio")
            sizes = tuple(int(int(s or 0) * r) for s, r in zip(x[2:], ratios, strict=True))
        return self._indices((*x[:2], *sizes))


class MaxPool1d(_MaxPool):
    torch_cls = nn.MaxPool1d
    spatial = 1


class MaxPool2d(_MaxPool):
    torch_cls = nn.MaxPool2d
    spatial = 2


class MaxPool3d(_MaxPool):
    torch_cls = nn.MaxPool3d
    spatial = 3


class AvgPool1d(_AvgPool):
    torch_cls = nn.AvgPool1d
    spatial = 1


class AvgPool2d(_AvgPool):
    torch_cls = nn.AvgPool2d
    spatial = 2


class AvgPool3d(_AvgPool):
    torch_cls = nn.AvgPool3d
    spatial = 3


class LPPool1d(_LPPool):
    torch_cls = nn.LPPool1d
    spatial = 1


class LPPool2d(_LPPool):
    torch_cls = nn.LPPool2d
    spatial = 2


class LPPool3d(_LPPool):
    torch_cls = nn.LPPool3d
    spatial = 3


class AdaptiveMaxPool1d(_AdaptivePool):
    torch_cls = nn.AdaptiveMaxPool1d
    spatial = 1


class AdaptiveMaxPool2d(_AdaptivePool):
    torch_cls = nn.AdaptiveMaxPool2d
    spatial = 2


class AdaptiveMaxPool3d(_AdaptivePool):
    torch_cls = nn.AdaptiveMaxPool3d
    spatial = 3


class AdaptiveAvgPool1d(_AdaptivePool):
    torch_cls = nn.AdaptiveAvgPool1d
    spatial = 1


class AdaptiveAvgPool2d(_AdaptivePool):
    torch_cls = nn.AdaptiveAvgPool2d
    spatial = 2


class AdaptiveAvgPool3d(_AdaptivePool):
    torch_cls = nn.AdaptiveAvgPool3d
    spatial = 3


class FractionalMaxPool2d(_FractionalMaxPool):
    torch_cls = nn.FractionalMaxPool2d
    spatial = 2


class FractionalMaxPool3d(_FractionalMaxPool):
    torch_cls = nn.FractionalMaxPool3d
    spatial = 3
