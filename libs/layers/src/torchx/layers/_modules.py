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

    def forward(self, x: torch.Tensor, initial_state: Any = None) -> Any:
        out, state = self.rnn(x, initial_state)
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

    def forward(
        self,
        *xs: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        need_weights: bool | None = None,
        attn_mask: torch.Tensor | None = None,
        average_attn_weights: bool | None = None,
        is_causal: bool = False,
    ) -> Any:
        query = xs[0]
        key = xs[1] if len(xs) > 1 else query
        value = xs[2] if len(xs) > 2 else key
        need = self.need_weights if need_weights is None else need_weights
        if is_causal and attn_mask is None:
            # torch takes is_causal only as a hint next to a mask: make the mask
            attn_mask = causal_mask(query, key, key_padding_mask)
        out, weights = self.attention(
            query,
            key,
            value,
            key_padding_mask=key_padding_mask,
            need_weights=need,
            attn_mask=attn_mask,
            average_attn_weights=self.average
            if average_attn_weights is None
            else average_attn_weights,
            is_causal=is_causal,
        )
        return (out, weights) if need else out


class DecoderModule(nn.Module):
    """Calls a TransformerDecoderLayer as ``(target, memory)``."""

    def __init__(self, layer: nn.TransformerDecoderLayer) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, target: torch.Tensor, memory: torch.Tensor, **masks: Any) -> torch.Tensor:
        out: torch.Tensor = self.layer(target, memory, **masks)
        return out


class UnpoolModule(nn.Module):
    """Calls a MaxUnpool module with a fixed ``output_size``."""

    def __init__(self, unpool: nn.Module, output_size: tuple[int, ...]) -> None:
        super().__init__()
        self.unpool = unpool
        self.output_size = output_size

    def forward(self, x: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.unpool(x, indices, self.output_size)
        return out

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


def causal_mask(
    query: torch.Tensor, key: torch.Tensor, padding: torch.Tensor | None = None
) -> torch.Tensor:
    """Mask for ``(batch, Lq, .)`` queries against ``(batch, Lk, .)`` keys: step i sees keys <= i.

    Boolean when the padding mask is boolean (torch warns on mixed mask types),
    otherwise additive (0 and -inf) in the query's dtype, as torch's own helper makes.
    """
    blocked = torch.ones(query.shape[1], key.shape[1], dtype=torch.bool, device=query.device).triu(
        1
    )
    if padding is not None and padding.dtype == torch.bool:
        return blocked
    zeros = torch.zeros(blocked.shape, dtype=query.dtype, device=query.device)
    return zeros.masked_fill(blocked, float("-inf"))


class CausalMasks:
    """A forward pre-hook that turns ``<flag>=True`` without a mask into a causal mask.

    torch's transformer modules take ``is_causal`` only as a hint that the given
    mask is causal; this lets ``is_causal=True`` stand alone. ``rules`` lists
    (flag, mask keyword, query input index, key input index, padding keyword).
    """

    def __init__(self, rules: tuple[tuple[str, str, int, int, str], ...]) -> None:
        self.rules = rules

    def __call__(
        self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        changed = False
        for flag, mask, q, k, padding in self.rules:
            if kwargs.get(flag) and kwargs.get(mask) is None:
                kwargs[mask] = causal_mask(args[q], args[k], kwargs.get(padding))
                changed = True
        return (args, kwargs) if changed else None


def add_causal_masks(module: nn.Module, *rules: tuple[str, str, int, int, str]) -> nn.Module:
    module.register_forward_pre_hook(CausalMasks(rules), with_kwargs=True)
    return module


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
