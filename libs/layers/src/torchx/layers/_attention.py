"""Attention and Transformer layers (batch-first; the model width is inferred)."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from ._errors import ShapeError
from ._layer import TorchLayer
from ._modules import AttentionModule, DecoderModule
from ._shapes import Shape, Shapes


class MultiheadAttention(TorchLayer):
    """``nn.MultiheadAttention`` called as ``(query)``, ``[query, key_value]`` or
    ``[query, key, value]``, each ``(batch, length, features)``.

    ``embed_dim`` comes from the query, ``kdim``/``vdim`` from key and value. It
    returns the attended output, or ``(output, weights)`` with ``need_weights=True``.
    """

    torch_cls = nn.MultiheadAttention
    inferred = ("embed_dim", "kdim", "vdim")
    fixed: ClassVar[dict[str, Any]] = {"batch_first": True}
    extras: ClassVar[dict[str, Any]] = {"need_weights": False, "average_attn_weights": True}
    num_inputs = (1, 2, 3)
    ndims: ClassVar[tuple[int, ...] | None] = (3,)
    layout = "(batch, length, features)"
    free_axes: ClassVar[tuple[int, ...]] = (1,)

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        query = shapes[0]
        key = shapes[1] if len(shapes) > 1 else query
        value = shapes[2] if len(shapes) > 2 else key
        return {"embed_dim": query[2], "kdim": key[2], "vdim": value[2]}

    def _wrap(self, native: nn.Module) -> nn.Module:
        assert isinstance(native, nn.MultiheadAttention)
        return AttentionModule(native, self.args["need_weights"], self.args["average_attn_weights"])

    def _formula(self, shapes: list[Shape]) -> Shapes:
        query = shapes[0]
        key = shapes[1] if len(shapes) > 1 else query
        if len(shapes) > 2 and shapes[2][1] != key[1]:
            raise ShapeError(self._path(), "key and value need the same length", got=shapes[2])
        out: Shape = query
        if not self.args["need_weights"]:
            return out
        length = int(key[1] or 0) + int(self.args["add_bias_kv"]) + int(self.args["add_zero_attn"])
        if self.args["average_attn_weights"]:
            return [out, (query[0], query[1], length)]
        return [out, (query[0], self.args["num_heads"], query[1], length)]


class _TransformerBase(TorchLayer):
    inferred = ("d_model",)
    fixed: ClassVar[dict[str, Any]] = {"batch_first": True}
    ndims: ClassVar[tuple[int, ...] | None] = (3,)
    layout = "(batch, length, d_model)"
    free_axes: ClassVar[tuple[int, ...]] = (1,)

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"d_model": shapes[0][2]}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]


class TransformerEncoderLayer(_TransformerBase):
    """``nn.TransformerEncoderLayer(nhead, ...)`` on ``(batch, length, d_model)``."""

    torch_cls = nn.TransformerEncoderLayer


class TransformerDecoderLayer(_TransformerBase):
    """``nn.TransformerDecoderLayer`` called as ``[target, memory]``."""

    torch_cls = nn.TransformerDecoderLayer
    num_inputs = (2,)
    layout = "[(batch, target_length, d_model), (batch, memory_length, d_model)]"

    def _wrap(self, native: nn.Module) -> nn.Module:
        assert isinstance(native, nn.TransformerDecoderLayer)
        return DecoderModule(native)

    def _formula(self, shapes: list[Shape]) -> Shapes:
        target, memory = shapes
        if memory[2] != target[2]:
            raise ShapeError(
                self._path(),
                f"memory features {memory[2]} differ from the target's d_model {target[2]}",
                expected=f"(batch, length, {target[2]})",
                got=memory,
            )
        return target
