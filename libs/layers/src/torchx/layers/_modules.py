"""Small plain nn.Modules that layers build where torch.nn has no exact equivalent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn


class ReshapeModule(nn.Module):
    """Reshape every sample to ``shape`` (the batch dimension is kept)."""

    def __init__(self, shape: tuple[int, ...], view: bool = False) -> None:
        super().__init__()
        self.shape = shape
        self.view = view

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.view:
            return x.view(x.shape[0], *self.shape)
        return x.reshape(x.shape[0], *self.shape)

    def extra_repr(self) -> str:
        return f"shape={self.shape}"


class PermuteModule(nn.Module):
    def __init__(self, dims: tuple[int, ...]) -> None:
        super().__init__()
        self.dims = dims

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(self.dims)

    def extra_repr(self) -> str:
        return f"dims={self.dims}"


class MergeModule(nn.Module):
    """Combine several tensors into one (sum, product, concatenation, ...)."""

    def __init__(self, mode: str, dim: int = -1) -> None:
        super().__init__()
        self.mode = mode
        self.dim = dim

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        mode = self.mode
        if mode == "concat":
            return torch.cat(xs, self.dim)
        out = xs[0]
        if mode == "subtract":
            return out - xs[1]
        for x in xs[1:]:
            if mode in ("add", "average"):
                out = out + x
            elif mode == "multiply":
                out = out * x
            elif mode == "maximum":
                out = torch.maximum(out, x)
            else:
                out = torch.minimum(out, x)
        return out / len(xs) if mode == "average" else out

    def extra_repr(self) -> str:
        return f"mode={self.mode!r}" + (f", dim={self.dim}" if self.mode == "concat" else "")


class RecurrentModule(nn.Module):
    """Runs a batch-first RNN/LSTM/GRU and picks the outputs Keras-style."""

    def __init__(self, rnn: nn.RNNBase, return_sequences: bool, return_state: bool) -> None:
        super().__init__()
        self.rnn = rnn
        self.return_sequences = return_sequences
        self.return_state = return_state

    def forward(self, x: torch.Tensor) -> Any:
        out, state = self.rnn(x)
        if not self.return_sequences:
            h = state[0] if isinstance(state, tuple) else state
            out = torch.cat((h[-2], h[-1]), -1) if self.rnn.bidirectional else h[-1]
        return (out, state) if self.return_state else out


class AttentionModule(nn.Module):
    """Calls a batch-first MultiheadAttention as ``(query[, key[, value]])``."""

    def __init__(self, attention: nn.MultiheadAttention, need_weights: bool, average: bool) -> None:
        super().__init__()
        self.attention = attention
        self.need_weights = need_weights
        self.average = average

    def forward(self, *xs: torch.Tensor) -> Any:
        query = xs[0]
        key = xs[1] if len(xs) > 1 else query
        value = xs[2] if len(xs) > 2 else key
        out, weights = self.attention(
            query, key, value, need_weights=self.need_weights, average_attn_weights=self.average
        )
        return (out, weights) if self.need_weights else out


class DecoderModule(nn.Module):
    """Calls a TransformerDecoderLayer as ``(target, memory)``."""

    def __init__(self, layer: nn.TransformerDecoderLayer) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, target: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.layer(target, memory)
        return out


class TimeDistributedModule(nn.Module):
    """Applies ``inner`` to every step of a ``(batch, time, ...)`` input."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps = x.shape[0], x.shape[1]
        y: torch.Tensor = self.inner(x.reshape(batch * steps, *x.shape[2:]))
        return y.reshape(batch, steps, *y.shape[1:])


class LambdaModule(nn.Module):
    """Calls a plain function; it has no parameters."""

    def __init__(self, fn: Callable[..., Any], label: str) -> None:
        super().__init__()
        self.fn = fn
        self.label = label

    def forward(self, *xs: Any) -> Any:
        return self.fn(*xs)

    def extra_repr(self) -> str:
        return self.label
