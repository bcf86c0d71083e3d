"""Pooling: max, average, adaptive, power-average (LP), fractional max, and max unpooling."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from ._errors import ShapeError, format_shape
from ._layer import Stateless
from ._modules import UnpoolModule
from ._shapes import Shape, Shapes, ntuple, pool_out
from ._spatial import SpatialLayer


class _Pool(SpatialLayer, Stateless):
    def _indices(self, out: Shape) -> Shapes:
        return [out, out] if self.args.get("return_indices") else out

    def _window(self, shapes: list[Shape], padding: Any, dilation: Any) -> Shape:
        x = shapes[0]
        kernel = self._window_arg("kernel_size", self.args["kernel_size"])
        stride_arg = self.args["stride"]
        stride = (
            kernel
            if stride_arg is None or stride_arg == []
            else self._window_arg("stride", stride_arg)
        )
        pads = self._padding_arg(padding)
        dils = self._window_arg("dilation", dilation)
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


class _MaxUnpool(_Pool):
    """Inverse of max pooling, called as ``[pooled, indices]`` where both come from a
    ``MaxPool`` layer with ``return_indices=True``.

    ``output_size`` (the spatial sizes) picks among the sizes a pooling could have
    come from; by default the smallest, as in torch.
    """

    extras: ClassVar[dict[str, Any]] = {"output_size": None}
    num_inputs = (2,)

    def _default_sizes(self, x: Shape) -> tuple[tuple[int, ...], tuple[int, ...]]:
        n = self.spatial
        kernel = ntuple(self.args["kernel_size"], n, "kernel_size")
        stride_arg = self.args["stride"]
        stride = kernel if stride_arg is None else ntuple(stride_arg, n, "stride")
        pads = self._padding_arg(self.args["padding"])
        sizes = tuple(
            (int(s or 0) - 1) * st - 2 * p + k
            for s, k, st, p in zip(x[2:], kernel, stride, pads, strict=True)
        )
        return sizes, stride

    def _formula(self, shapes: list[Shape]) -> Shapes:
        x, indices = shapes
        if not all(a == b for a, b in zip(x[1:], indices[1:], strict=True)):
            raise ShapeError(
                self._path(),
                "the indices must have the shape of the pooled input",
                expected=f"indices {format_shape(x)}",
                got=indices,
                hint="pass the two outputs of a MaxPool layer with return_indices=True",
            )
        default, stride = self._default_sizes(x)
        wanted = self.args["output_size"]
        if wanted is None:
            return (*x[:2], *default)
        sizes = ntuple(wanted, self.spatial, "output_size")
        for size, low, st in zip(sizes, default, stride, strict=True):
            if not low - st < size < low + st:
                raise ShapeError(
                    self._path(),
                    f"output_size={tuple(sizes)} cannot come from this pooling: each size "
                    f"must lie between default-stride and default+stride (exclusive) "
                    f"around the defaults {default}",
                    got=x,
                )
        return (*x[:2], *sizes)

    def _wrap(self, native: nn.Module) -> nn.Module:
        wanted = self.args["output_size"]
        if wanted is None:
            return native
        return UnpoolModule(native, ntuple(wanted, self.spatial, "output_size"))


class MaxUnpool1d(_MaxUnpool):
    torch_cls = nn.MaxUnpool1d
    spatial = 1


class MaxUnpool2d(_MaxUnpool):
    torch_cls = nn.MaxUnpool2d
    spatial = 2


class MaxUnpool3d(_MaxUnpool):
    torch_cls = nn.MaxUnpool3d
    spatial = 3
