"""Fallback shape inference: run a module on the meta device (no data, no FLOPs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from ._errors import ShapeError
from ._shapes import Shape, Shapes, probe

# A stand-in batch size for an unknown batch; 2 because some modules (BatchNorm in
# training mode) refuse a batch of one even on the meta device.
_META_BATCH = 2


def meta_tensor(shape: Shape, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    concrete = tuple(_META_BATCH if d is None else d for d in shape)
    return torch.empty(concrete, device="meta", dtype=dtype)


def _shapes_of(value: Any, batch_unknown: bool) -> Shapes:
    if isinstance(value, torch.Tensor):
        dims: list[int | None] = list(value.shape)
        if batch_unknown and dims and dims[0] == _META_BATCH:
            dims[0] = None
        return tuple(dims)
    if isinstance(value, (tuple, list)):
        return [_shapes_of(v, batch_unknown) for v in value]
    raise TypeError(f"expected tensors as outputs, got {type(value).__name__}")


def eval_on_meta(
    fn: Callable[..., Any], shapes: Sequence[Shape], path: str, consts: Sequence[Any] = ()
) -> Shapes:
    """Shapes returned by ``fn`` applied to meta tensors of ``shapes``."""
    return probe(lambda concrete: _run_on_meta(fn, concrete, path, consts), shapes)


def _run_on_meta(
    fn: Callable[..., Any], shapes: Sequence[Shape], path: str, consts: Sequence[Any]
) -> Shapes:
    batch_unknown = any(s[0] is None for s in shapes)
    last_error: Exception | None = None
    # integer inputs are tried second so that index-taking modules (embeddings) work too
    for dtype in (torch.float32, torch.int64):
        args = [meta_tensor(s, dtype) for s in shapes]
        try:
            with torch.no_grad():
                out = fn(*args, *consts)
        except (RuntimeError, ValueError, IndexError, TypeError, NotImplementedError) as e:
            last_error = e
            continue
        return _shapes_of(out, batch_unknown)
    raise ShapeError(
        path,
        f"running it on the input shape failed: {last_error}",
        got=shapes[0] if len(shapes) == 1 else None,
    )


def module_on_meta(module: nn.Module, shapes: Sequence[Shape], path: str) -> Shapes:
    """Output shapes of ``module``, found without touching its real parameters."""
    state = {
        name: torch.empty_like(t, device="meta")
        for name, t in [*module.named_parameters(), *module.named_buffers()]
    }

    def call(*args: torch.Tensor) -> Any:
        return torch.func.functional_call(module, state, args)

    return eval_on_meta(call, shapes, path)
