"""The base of layers over ``(batch, channels, *spatial)`` input: convolution, pooling, padding."""

from __future__ import annotations

from typing import Any, ClassVar

from ._errors import ShapeError
from ._shapes import ntuple
from ._torch_layer import TorchLayer

_LAYOUTS = {
    1: "(batch, channels, L)",
    2: "(batch, channels, H, W)",
    3: "(batch, channels, D, H, W)",
}


class SpatialLayer(TorchLayer):
    """A layer whose concrete classes name their number of spatial dimensions, from which
    the input rank and the layout shown in shape errors follow."""

    spatial: ClassVar[int]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "spatial"):
            cls.ndims = (cls.spatial + 2,)
            cls.layout = _LAYOUTS[cls.spatial]

    def _window_arg(self, field: str, value: Any) -> tuple[Any, ...]:
        """A kernel size, stride or dilation as one value per spatial dimension, each at
        least 1: a 0 would divide by zero in the shape formula, a negative mislead it."""
        sizes = ntuple(value, self.spatial, field)
        for v in sizes:
            if isinstance(v, int) and v <= 0:  # anything else is left to torch's check
                raise ShapeError(
                    self._path(),
                    f"{field}={value!r}: every value must be at least 1",
                    hint=f"write {field} as a positive int, or one per spatial dim",
                )
        return sizes

    def _padding_arg(self, value: Any) -> tuple[Any, ...]:
        """The padding of a layer that takes sizes only (transposed convolution, pooling)."""
        if isinstance(value, str):
            # padding='same' as a Conv2d takes it: torch has no such word here
            raise ShapeError(
                self._path(),
                f"padding={value!r}: torch.nn.{self.torch_cls.__name__} takes sizes, not a word",
                hint="write padding as one int or one per spatial dim; with stride=1 and an odd "
                "kernel_size, padding=dilation * (kernel_size - 1) // 2 keeps the input's size",
            )
        return ntuple(value, self.spatial, "padding")
