"""Convolutions: ``in_channels`` is taken from input dimension 1."""

from __future__ import annotations

from typing import Any

from torch import nn

from ._errors import ShapeError
from ._shapes import Shape, Shapes, conv_out, conv_transpose_out, ntuple
from ._spatial import SpatialLayer


class _ConvBase(SpatialLayer):
    inferred = ("in_channels",)

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        channels = shapes[0][1]
        groups = self.args["groups"]
        if isinstance(channels, int) and channels % groups:
            raise ShapeError(
                self._path(),
                f"input channels {channels} are not divisible by groups={groups}",
                got=shapes[0],
                hint="pick groups that divide the channel count",
            )
        return {"in_channels": channels}

    def _spatial_args(self) -> tuple[tuple[int, ...], ...]:
        args = self.args
        return (
            self._window_arg("kernel_size", args["kernel_size"]),
            self._window_arg("stride", args["stride"]),
            self._window_arg("dilation", args["dilation"]),
        )


class _Conv(_ConvBase):
    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        args = self.args
        n = self.spatial
        kernel, stride, dilation = self._spatial_args()
        padding = args["padding"]
        if padding == "same":
            return (x[0], args["out_channels"], *x[2:])
        if isinstance(padding, str) and padding != "valid":
            # torch refuses it too, but only after this formula would fail on the string
            raise ShapeError(
                self._path(),
                f"padding={padding!r} is not a padding torch.nn.{self.torch_cls.__name__} takes",
                hint="write padding='same', 'valid', or sizes (one int, or one per spatial dim)",
            )
        pads = (0,) * n if padding == "valid" else ntuple(padding, n, "padding")
        # the input rank was checked against ndims, so all have n entries; the sizes
        # are known (unknown ones are filled in by probe before a formula runs)
        sizes = map(conv_out, x[2:], kernel, stride, pads, dilation)  # type: ignore[arg-type]
        return (x[0], args["out_channels"], *sizes)


class _ConvTranspose(_ConvBase):
    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        n = self.spatial
        kernel, stride, dilation = self._spatial_args()
        pads = self._padding_arg(self.args["padding"])
        extra = ntuple(self.args["output_padding"], n, "output_padding")
        sizes = tuple(
            conv_transpose_out(int(s or 0), k, st, p, d, op)
            for s, k, st, p, d, op in zip(x[2:], kernel, stride, pads, dilation, extra, strict=True)
        )
        return (x[0], self.args["out_channels"], *sizes)


class Conv1d(_Conv):
    torch_cls = nn.Conv1d
    spatial = 1


class Conv2d(_Conv):
    torch_cls = nn.Conv2d
    spatial = 2


class Conv3d(_Conv):
    torch_cls = nn.Conv3d
    spatial = 3


class ConvTranspose1d(_ConvTranspose):
    torch_cls = nn.ConvTranspose1d
    spatial = 1


class ConvTranspose2d(_ConvTranspose):
    torch_cls = nn.ConvTranspose2d
    spatial = 2


class ConvTranspose3d(_ConvTranspose):
    torch_cls = nn.ConvTranspose3d
    spatial = 3
