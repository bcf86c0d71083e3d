"""Activations and dropout: shape-preserving layers (PReLU and GLU infer more)."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from torch import nn

from ._errors import ShapeError
from ._layer import Stateless
from ._shapes import Shape, Shapes, normalize_dim
from ._torch_layer import TorchLayer


class _Elementwise(TorchLayer, Stateless):
    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]


def _elementwise(
    torch_cls: type[nn.Module], ndims: tuple[int, ...] | None = None
) -> type[TorchLayer]:
    attrs: dict[str, Any] = {
        "torch_cls": torch_cls,
        "__doc__": f"``nn.{torch_cls.__name__}``; the output has the input's shape.",
        "__module__": __name__,
        "__qualname__": torch_cls.__name__,
    }
    if ndims is not None:
        attrs["ndims"] = ndims
    return type(torch_cls.__name__, (_Elementwise,), attrs)


Threshold = _elementwise(nn.Threshold)
ReLU = _elementwise(nn.ReLU)
RReLU = _elementwise(nn.RReLU)
Hardtanh = _elementwise(nn.Hardtanh)
ReLU6 = _elementwise(nn.ReLU6)
Sigmoid = _elementwise(nn.Sigmoid)
Hardsigmoid = _elementwise(nn.Hardsigmoid)
Tanh = _elementwise(nn.Tanh)
SiLU = _elementwise(nn.SiLU)
Mish = _elementwise(nn.Mish)
Hardswish = _elementwise(nn.Hardswish)
ELU = _elementwise(nn.ELU)
CELU = _elementwise(nn.CELU)
SELU = _elementwise(nn.SELU)
GELU = _elementwise(nn.GELU)
Hardshrink = _elementwise(nn.Hardshrink)
LeakyReLU = _elementwise(nn.LeakyReLU)
LogSigmoid = _elementwise(nn.LogSigmoid)
Softplus = _elementwise(nn.Softplus)
Softshrink = _elementwise(nn.Softshrink)
Softsign = _elementwise(nn.Softsign)
Tanhshrink = _elementwise(nn.Tanhshrink)
Softmin = _elementwise(nn.Softmin)
Softmax = _elementwise(nn.Softmax)
Softmax2d = _elementwise(nn.Softmax2d, (4,))
LogSoftmax = _elementwise(nn.LogSoftmax)

Dropout = _elementwise(nn.Dropout)
Dropout1d = _elementwise(nn.Dropout1d, (3,))
Dropout2d = _elementwise(nn.Dropout2d, (4,))
Dropout3d = _elementwise(nn.Dropout3d, (5,))
AlphaDropout = _elementwise(nn.AlphaDropout)
FeatureAlphaDropout = _elementwise(nn.FeatureAlphaDropout)


class PReLU(TorchLayer):
    """``nn.PReLU`` with one slope per channel (input dimension 1) unless ``shared``."""

    torch_cls = nn.PReLU
    inferred = ("num_parameters",)
    params: ClassVar[tuple[inspect.Parameter, ...] | None] = (
        inspect.Parameter("init", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=0.25),
        inspect.Parameter("shared", inspect.Parameter.KEYWORD_ONLY, default=False),
    )

    def torch_kwargs(self, shapes: list[Shape]) -> dict[str, Any]:
        x = shapes[0]
        channels = 1 if self.args["shared"] or len(x) < 2 else x[1]
        return {"init": self.args["init"], "num_parameters": channels}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]


class GLU(TorchLayer, Stateless):
    """``nn.GLU``: halves dimension ``dim``."""

    torch_cls = nn.GLU

    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        dim = normalize_dim(self.args["dim"], len(x))
        size = x[dim]
        if dim == 0 or size is None or size % 2:
            raise ShapeError(
                self._path(),
                f"GLU splits dimension {dim} in half, but it has size {size}",
                got=x,
                hint="use a dim whose size is even",
            )
        return (*x[:dim], size // 2, *x[dim + 1 :])
