"""The base of layers over ``(batch, channels, *spatial)`` input: convolution, pooling, padding."""

from __future__ import annotations

from typing import Any, ClassVar

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
