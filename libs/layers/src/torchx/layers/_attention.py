"""Attention and Transformer layers (batch-first; the model width is inferred)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from torch import nn

from ._errors import ShapeError, format_shape
from ._layer import keyword_shapes
from ._modules import AttentionModule, DecoderModule, add_causal_masks
from ._shapes import Shape, Shapes
from ._torch_layer import TorchLayer

#: A mask keyword: ("attn", query input, key input) for a (Lq, Lk) attention mask,
#: or ("padding", key input, key input) for a (batch, Lk) key padding mask.
MaskRule = tuple[str, int, int]


def _dim(d: int | None) -> str:
    return "?" if d is None else str(d)


def _fits(want: int | None, got: Any) -> bool:
    return want is None or got is None or want == got


def check_mask(
    where: str, key: str, rule: MaskRule, shapes: Sequence[Shape], got: Shape, heads: int | None
) -> None:
    """Refuse mask ``key`` of shape ``got`` unless it fits the inputs' ``shapes`` (their
    batch and lengths; None where not known yet, as for Placeholders)."""
    kind, q, k = rule
    batch, lq, lk = shapes[k][0], shapes[q][1], shapes[k][1]
    # the expected shape is written out only for a misfit: this runs on every call
    if kind == "padding":
        if len(got) == 2 and _fits(batch, got[0]) and _fits(lk, got[1]):
            return
        expected = format_shape((batch, lk))
    else:
        stacked = None if batch is None or heads is None else batch * heads
        if (
            len(got) in (2, 3)
            and (len(got) == 2 or _fits(stacked, got[0]))
            and _fits(lq, got[-2])
            and _fits(lk, got[-1])
        ):
            return
        pair = f"{_dim(lq)}, {_dim(lk)}"
        expected = f"({pair}) or ({'batch * num_heads' if stacked is None else stacked}, {pair})"
    raise ShapeError(
        where,
        f"{key} does not fit the inputs",
        expected=f"{key} {expected}",
        got=got,
        hint="a padding mask is (batch, key length); an attention mask is "
        "(query length, key length) or (batch * num_heads, query length, key length)",
    )


def check_keywords(
    where: str,
    masks: dict[str, MaskRule],
    flags: tuple[str, ...],
    shapes: Sequence[Shape],
    keywords: dict[str, Any],
    heads: int | None,
) -> None:
    """Refuse a call's ``keywords`` (as ``keyword_shapes`` gives them: a mask as its
    shape) unless each flag is True or False and each mask fits the inputs' ``shapes``."""
    for key, value in keywords.items():
        if key in flags:
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"layer '{where}': {key}={value!r}; expected True or False")
            continue
        rule = masks.get(key)
        if value is None or rule is None:  # not ours: torch's own call says what it takes
            continue
        if not isinstance(value, tuple):
            raise TypeError(f"layer '{where}': {key} must be one tensor (a mask)")
        check_mask(where, key, rule, shapes, value, heads)


class MaskCheck:
    """A forward pre-hook on the module a masked layer builds, and the one check of a
    run's keywords: every call that runs the module (the layer's own, or a Sequential's
    or Functional's, which call the module directly) has its flags and masks checked
    against that call's inputs, batch included."""

    def __init__(
        self,
        where: str,
        rules: dict[int, dict[str, MaskRule]],
        flags: tuple[str, ...],
        heads: int | None,
    ) -> None:
        self.where = where
        self.rules = rules  # per number of inputs: mask keyword -> rule
        self.flags = flags
        self.heads = heads

    def __call__(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        masks = self.rules.get(len(args)) if kwargs else None
        if masks is not None:
            shapes = [tuple(x.shape) for x in args]
            keywords = keyword_shapes(kwargs, False, self.where)
            check_keywords(self.where, masks, self.flags, shapes, keywords, self.heads)


class _Masked(TorchLayer):
    """A layer whose call takes attention masks and causal flags as keywords."""

    #: boolean call keywords
    flags: ClassVar[tuple[str, ...]] = ()
    #: one rule per attention of the layer, ``(causal flag, mask keyword, query input,
    #: key input, key padding mask keyword)``: the masks a call takes, and the causal
    #: masks the causal flags make
    causal_rules: ClassVar[tuple[tuple[str, str, int, int, str], ...]] = ()

    def _masks(self, n_inputs: int) -> dict[str, MaskRule]:
        masks: dict[str, MaskRule] = {}
        for _, mask, query, key, padding in self.causal_rules:
            masks[mask] = ("attn", query, key)
            masks[padding] = ("padding", key, key)
        return masks

    def _heads(self) -> int | None:
        """The number of attention heads (a 3-d attention mask is per batch and head)."""
        heads = self.args.get("num_heads", self.args.get("nhead"))
        return heads if isinstance(heads, int) else None

    def _adapter(self, native: nn.Module) -> nn.Module:
        """The module the layer calls, around torch's."""
        return native

    def _wrap(self, native: nn.Module) -> nn.Module:
        module = self._adapter(native)
        rules = {n: self._masks(n) for n in self.num_inputs}
        module.register_forward_pre_hook(
            MaskCheck(self._path(), rules, self.flags, self._heads()), with_kwargs=True
        )
        # after the check: the masks the causal flags make fit by construction
        return add_causal_masks(module, *self.causal_rules) if self.causal_rules else module

    def _call_shapes(self, shapes: list[Shape], kwargs: dict[str, Any], out: Shapes) -> Shapes:
        masks = self._masks(len(shapes))
        check_keywords(self._path(), masks, self.flags, shapes, kwargs, self._heads())
        return out


class MultiheadAttention(_Masked):
    """``nn.MultiheadAttention`` called as ``(query)``, ``[query, key_value]`` or
    ``[query, key, value]``, each ``(batch, length, features)``.

    ``embed_dim`` comes from the query, ``kdim``/``vdim`` from key and value. It
    returns the attended output, or ``(output, weights)`` with ``need_weights=True``.
    A call takes ``attn_mask``, ``key_padding_mask``, ``is_causal`` (alone it makes
    the causal mask) and ``need_weights``/``average_attn_weights`` for that call.
    """

    torch_cls = nn.MultiheadAttention
    inferred = ("embed_dim", "kdim", "vdim")
    fixed: ClassVar[dict[str, Any]] = {"batch_first": True}
    extras: ClassVar[dict[str, Any]] = {"need_weights": False, "average_attn_weights": True}
    num_inputs = (1, 2, 3)
    ndims: ClassVar[tuple[int, ...] | None] = (3,)
    layout = "(batch, length, features)"
    free_axes: ClassVar[tuple[int, ...]] = (1,)
    flags = ("need_weights", "average_attn_weights", "is_causal")
    call_keywords = ("attn_mask", "key_padding_mask", *flags)

    def _masks(self, n_inputs: int) -> dict[str, MaskRule]:
        key = 1 if n_inputs > 1 else 0
        return {"attn_mask": ("attn", 0, key), "key_padding_mask": ("padding", key, key)}

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        query = shapes[0]
        key = shapes[1] if len(shapes) > 1 else query
        value = shapes[2] if len(shapes) > 2 else key
        return {"embed_dim": query[2], "kdim": key[2], "vdim": value[2]}

    def _adapter(self, native: nn.Module) -> nn.Module:
        assert isinstance(native, nn.MultiheadAttention)
        return AttentionModule(native, self.args["need_weights"], self.args["average_attn_weights"])

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return self._outputs(shapes, self.args["need_weights"], self.args["average_attn_weights"])

    def _outputs(self, shapes: list[Shape], need_weights: bool, average: bool) -> Shapes:
        query = shapes[0]
        key = shapes[1] if len(shapes) > 1 else query
        if len(shapes) > 2 and not _fits(shapes[2][1], key[1]):
            raise ShapeError(self._path(), "key and value need the same length", got=shapes[2])
        out: Shape = query
        if not need_weights:
            return out
        extra = int(self.args["add_bias_kv"]) + int(self.args["add_zero_attn"])
        length = None if key[1] is None else key[1] + extra
        if average:
            return [out, (query[0], query[1], length)]
        return [out, (query[0], self.args["num_heads"], query[1], length)]

    def _call_shapes(self, shapes: list[Shape], kwargs: dict[str, Any], out: Shapes) -> Shapes:
        super()._call_shapes(shapes, kwargs, out)
        need = kwargs.get("need_weights")
        average = kwargs.get("average_attn_weights")
        if need is None and average is None:
            return out
        return self._outputs(
            shapes,
            self.args["need_weights"] if need is None else need,
            self.args["average_attn_weights"] if average is None else average,
        )


class _TransformerBase(_Masked):
    inferred: ClassVar[tuple[str, ...]] = ("d_model",)
    fixed: ClassVar[dict[str, Any]] = {"batch_first": True}
    ndims: ClassVar[tuple[int, ...] | None] = (3,)
    layout = "(batch, length, d_model)"
    free_axes: ClassVar[tuple[int, ...]] = (1,)

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"d_model": shapes[0][2]}

    def _formula(self, shapes: list[Shape]) -> Shapes:
        return shapes[0]

    def _with_features_of(self, result: Shape, other: Shape, other_name: str) -> Shape:
        """``result``, the output of a call on two sequences, once ``other``, the second
        sequence, is checked to have as many features (d_model) as ``result``."""
        if other[2] != result[2]:
            raise ShapeError(
                self._path(),
                f"{other_name} features {other[2]} differ from the target's d_model {result[2]}",
                expected=f"(batch, length, {result[2]})",
                got=other,
            )
        return result


class _EncoderBase(_TransformerBase):
    """Masks of an encoder called on ``src``: ``is_causal`` alone makes the causal mask."""

    flags = ("is_causal",)
    causal_rules: ClassVar[tuple[tuple[str, str, int, int, str], ...]] = (
        ("is_causal", "src_mask", 0, 0, "src_key_padding_mask"),
    )


class TransformerEncoderLayer(_EncoderBase):
    """``nn.TransformerEncoderLayer(nhead, ...)`` on ``(batch, length, d_model)``.

    A call takes ``src_mask``, ``src_key_padding_mask`` and ``is_causal``.
    """

    torch_cls = nn.TransformerEncoderLayer
    call_keywords = ("src_mask", "src_key_padding_mask", "is_causal")


class _DecoderBase(_TransformerBase):
    """Called as ``[target, memory]``; masks as in ``nn.TransformerDecoder``."""

    num_inputs = (2,)
    layout = "[(batch, target_length, d_model), (batch, memory_length, d_model)]"
    flags = ("tgt_is_causal", "memory_is_causal")
    call_keywords = (
        "tgt_mask",
        "memory_mask",
        "tgt_key_padding_mask",
        "memory_key_padding_mask",
        *flags,
    )
    causal_rules: ClassVar[tuple[tuple[str, str, int, int, str], ...]] = (
        ("tgt_is_causal", "tgt_mask", 0, 0, "tgt_key_padding_mask"),
        ("memory_is_causal", "memory_mask", 0, 1, "memory_key_padding_mask"),
    )

    def _formula(self, shapes: list[Shape]) -> Shapes:
        target, memory = shapes
        return self._with_features_of(target, memory, "memory")


class TransformerDecoderLayer(_DecoderBase):
    """``nn.TransformerDecoderLayer`` called as ``[target, memory]``.

    A call takes ``tgt_mask``, ``memory_mask``, ``tgt_key_padding_mask``,
    ``memory_key_padding_mask``, ``tgt_is_causal`` and ``memory_is_causal``.
    """

    torch_cls = nn.TransformerDecoderLayer

    def _adapter(self, native: nn.Module) -> nn.Module:
        assert isinstance(native, nn.TransformerDecoderLayer)
        return DecoderModule(native)
