"""Whole transformer stacks: ``TransformerEncoder``, ``TransformerDecoder``, ``Transformer``."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from torch import nn

from ._attention import (
    TransformerDecoderLayer,
    TransformerEncoderLayer,
    _DecoderBase,
    _EncoderBase,
    _TransformerBase,
)
from ._layer import Layer
from ._shapes import Shape, Shapes
from ._spec import layer_from_body
from ._torch_layer import TorchLayer

_P = inspect.Parameter


def _param(name: str, default: Any = _P.empty) -> inspect.Parameter:
    return _P(name, _P.POSITIONAL_OR_KEYWORD, default=default)


class _Stack(TorchLayer):
    """A stack of copies of one torchx layer template, with an optional final norm layer.

    The template (an unbuilt ``L.TransformerEncoderLayer``/``DecoderLayer``) only
    carries the configuration: the stack builds torch modules from it, and torch
    copies the built layer ``num_layers`` times, as ``nn.TransformerEncoder`` does.
    """

    template_arg: ClassVar[str]
    template_cls: ClassVar[type[TorchLayer]]

    def _validate(self) -> None:
        name = type(self).__name__
        template = self.args[self.template_arg]
        if not isinstance(template, self.template_cls):
            raise TypeError(
                f"L.{name}: {self.template_arg}={template!r}; expected an "
                f"L.{self.template_cls.__name__}(...) to copy"
            )
        n = self.args["num_layers"]
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(f"L.{name}: num_layers={n!r}; expected a positive int")
        norm = self.args["norm"]
        if norm is not None and not isinstance(norm, Layer):
            raise TypeError(
                f"L.{name}: norm={norm!r}; expected a torchx layer such as L.LayerNorm() or None"
            )

    def _heads(self) -> int | None:
        heads: int | None = self.args[self.template_arg]._heads()
        return heads

    def _sizes(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"d_model": shapes[0][2]}

    def torch_kwargs(self, shapes: list[Shape]) -> dict[str, Any]:
        kwargs = {k: v for k, v in self._config.items() if k not in self.extras}
        template = self.args[self.template_arg]
        # the template and the norm are torch modules: only their shapes and
        # arguments now, the modules themselves in _final_kwargs
        kwargs[self.template_arg] = (template, template.torch_kwargs(shapes))
        norm = self.args["norm"]
        if norm is not None:
            norm._plan([(shapes[0][0], None, shapes[0][2])], path=f"{self._path()}.norm")
            kwargs["norm"] = norm
        return kwargs

    def _final_kwargs(self, kwargs: dict[str, Any], probe: bool) -> dict[str, Any]:
        kwargs = dict(kwargs)
        template, template_kwargs = kwargs[self.template_arg]
        kwargs[self.template_arg] = template.torch_cls(**template_kwargs)
        norm = kwargs.get("norm")
        if norm is not None:
            # a trial leaves the norm out: making it would make its real parameters,
            # and it checked its own arguments when its shapes were planned
            kwargs["norm"] = None if probe else norm.call_module()
        return kwargs

    def get_config(self) -> dict[str, Any]:
        config = dict(self._config)
        config[self.template_arg] = config[self.template_arg]._spec_body()
        if config.get("norm") is not None:
            config["norm"] = config["norm"]._spec_body()
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any], name: str | None) -> Layer:
        config = dict(config)
        where = f"{cls.__name__}.config"
        config[cls.template_arg] = layer_from_body(
            config.get(cls.template_arg), f"{where}.{cls.template_arg}"
        )
        if config.get("norm") is not None:
            config["norm"] = layer_from_body(config["norm"], f"{where}.norm")
        return cls(**config, name=name)


class TransformerEncoder(_Stack, _EncoderBase):
    """``nn.TransformerEncoder``: ``num_layers`` copies of ``encoder_layer`` on
    ``(batch, length, d_model)``.

    ``L.TransformerEncoder(L.TransformerEncoderLayer(8), 6, norm=L.LayerNorm())``.
    A call takes ``mask``, ``src_key_padding_mask`` and ``is_causal``.
    """

    torch_cls = nn.TransformerEncoder
    template_arg = "encoder_layer"
    template_cls = TransformerEncoderLayer
    inferred = ()
    causal_rules = (("is_causal", "mask", 0, 0, "src_key_padding_mask"),)
    call_keywords = ("mask", "src_key_padding_mask", "is_causal")
    params: ClassVar[tuple[inspect.Parameter, ...] | None] = (
        _param("encoder_layer"),
        _param("num_layers"),
        _param("norm", None),
        _param("enable_nested_tensor", True),
        _param("mask_check", True),
    )


class TransformerDecoder(_Stack, _DecoderBase):
    """``nn.TransformerDecoder``: ``num_layers`` copies of ``decoder_layer``, called as
    ``[target, memory]``; masks as in :class:`TransformerDecoderLayer`."""

    torch_cls = nn.TransformerDecoder
    template_arg = "decoder_layer"
    template_cls = TransformerDecoderLayer
    inferred = ()
    params: ClassVar[tuple[inspect.Parameter, ...] | None] = (
        _param("decoder_layer"),
        _param("num_layers"),
        _param("norm", None),
    )


class Transformer(_TransformerBase):
    """``nn.Transformer(nhead, ...)`` called as ``[src, tgt]``, each
    ``(batch, length, d_model)``; it returns ``(batch, tgt_length, d_model)``.

    A call takes ``src_mask``, ``tgt_mask``, ``memory_mask``, the three
    ``*_key_padding_mask`` and ``src_is_causal``/``tgt_is_causal``/``memory_is_causal``.
    """

    torch_cls = nn.Transformer
    fixed: ClassVar[dict[str, Any]] = {
        "batch_first": True,
        "custom_encoder": None,
        "custom_decoder": None,
    }
    num_inputs = (2,)
    layout = "[(batch, source_length, d_model), (batch, target_length, d_model)]"
    flags = ("src_is_causal", "tgt_is_causal", "memory_is_causal")
    call_keywords = (
        "src_mask",
        "tgt_mask",
        "memory_mask",
        "src_key_padding_mask",
        "tgt_key_padding_mask",
        "memory_key_padding_mask",
        *flags,
    )

    causal_rules = (
        ("src_is_causal", "src_mask", 0, 0, "src_key_padding_mask"),
        ("tgt_is_causal", "tgt_mask", 1, 1, "tgt_key_padding_mask"),
        ("memory_is_causal", "memory_mask", 1, 0, "memory_key_padding_mask"),
    )

    def _formula(self, shapes: list[Shape]) -> Shapes:
        src, tgt = shapes
        return self._with_features_of(tgt, src, "source")
