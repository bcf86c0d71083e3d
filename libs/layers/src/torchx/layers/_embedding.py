"""Embedding lookups: integer indices in, vectors out."""

from __future__ import annotations

from typing import ClassVar

from torch import nn

from ._shapes import Shape, Shapes
from ._torch_layer import TorchLayer


class Embedding(TorchLayer):
    """``nn.Embedding``: ``(batch, ...)`` indices -> ``(batch, ..., embedding_dim)``."""

    torch_cls = nn.Embedding
    free_axes: ClassVar[tuple[int, ...]] = (1,)

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return (*shapes[0], self.args["embedding_dim"])


class EmbeddingBag(TorchLayer):
    """``nn.EmbeddingBag`` on ``(batch, bag_size)`` indices -> ``(batch, embedding_dim)``."""

    torch_cls = nn.EmbeddingBag
    ndims: ClassVar[tuple[int, ...] | None] = (2,)
    layout = "(batch, bag_size)"
    free_axes: ClassVar[tuple[int, ...]] = (1,)

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return (shapes[0][0], self.args["embedding_dim"])
