"""Layers that only rearrange: Flatten, Unflatten, Reshape/View, Permute."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from torch import nn

from ._errors import ShapeError
from ._layer import Stateless
from ._modules import PermuteModule, ReshapeModule
from ._shapes import Shape, Shapes, normalize_dim
from ._torch_layer import TorchLayer


class Flatten(TorchLayer, Stateless):
    """``nn.Flatten``: by default every dimension after the batch becomes one."""

    torch_cls = nn.Flatten

    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        start = normalize_dim(self.args["start_dim"], len(x))
        end = normalize_dim(self.args["end_dim"], len(x))
        if start == 0:
            raise ShapeError(self._path(), "start_dim=0 would merge the batch dimension", got=x)
        # no size after the batch is None here (probe fills in unknown ones first)
        size = math.prod(x[start : end + 1])  # type: ignore[arg-type]
        return (*x[:start], size, *x[end + 1 :])


class Unflatten(TorchLayer, Stateless):
    """``nn.Unflatten(dim, unflattened_size)``."""

    torch_cls = nn.Unflatten

    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        dim = normalize_dim(self.args["dim"], len(x))
        sizes = list(self.args["unflattened_size"])
        if dim == 0:
            raise ShapeError(self._path(), "dim=0 is the batch dimension", got=x)
        return (*x[:dim], *_resolve(sizes, int(x[dim] or 0), self._path(), x), *x[dim + 1 :])


def _resolve(target: list[int], numel: int, path: str, got: Shape) -> tuple[int, ...]:
    known = math.prod(d for d in target if d != -1)
    if target.count(-1) > 1 or known <= 0:
        raise ShapeError(path, f"the target shape {tuple(target)} is invalid", got=got)
    if -1 in target:
        if numel % known:
            raise ShapeError(
                path, f"{numel} elements per sample cannot be viewed as {tuple(target)}", got=got
            )
        target = [numel // known if d == -1 else d for d in target]
    elif known != numel:
        raise ShapeError(
            path,
            f"{numel} elements per sample cannot be viewed as {tuple(target)} ({known} elements)",
            got=got,
            hint="use -1 for one dimension to have it computed",
        )
    return tuple(target)


class Reshape(TorchLayer, Stateless):
    """Reshape each sample to ``shape`` (batch excluded; one entry may be -1)."""

    torch_cls = ReshapeModule
    fixed: ClassVar[dict[str, Any]] = {"view": False}

    def torch_kwargs(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"shape": tuple(self.args["shape"]), **self.fixed}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        numel = math.prod(int(d or 0) for d in x[1:])
        return (x[0], *_resolve(list(self.args["shape"]), numel, self._path(), x))


class View(Reshape):
    """Like :class:`Reshape` but uses ``Tensor.view`` (no copy; needs contiguous input)."""

    fixed: ClassVar[dict[str, Any]] = {"view": True}


class Permute(TorchLayer, Stateless):
    """Reorder dimensions; ``dims`` index the whole tensor and must keep 0 first."""

    torch_cls = PermuteModule

    def torch_kwargs(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"dims": tuple(self.args["dims"])}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        x = shapes[0]
        dims = [normalize_dim(d, len(x)) for d in self.args["dims"]]
        if sorted(dims) != list(range(len(x))) or dims[0] != 0:
            raise ShapeError(
                self._path(),
                f"dims={tuple(self.args['dims'])} must be a permutation of 0..{len(x) - 1} "
                "that keeps the batch dimension 0 first",
                got=x,
            )
        return tuple(x[d] for d in dims)
