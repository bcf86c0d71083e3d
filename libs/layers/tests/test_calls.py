"""Call keywords (masks, causal flags, initial RNN states) and sizes left as None."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

import torchx.layers as L
from torchx.layers import Placeholder, ShapeError, _attention, _recurrent

B, LQ, LK, D = 2, 5, 4, 8


def _causal(lq: int, lk: int) -> torch.Tensor:
    return torch.ones(lq, lk, dtype=torch.bool).triu(1)


def _padding(length: int) -> torch.Tensor:
    mask = torch.zeros(B, length, dtype=torch.bool)
    mask[0, -1] = True
    return mask


MHA_MASKS: dict[str, Callable[[int, int], dict[str, Any]]] = {
    "none": lambda lq, lk: {},
    "attn": lambda lq, lk: {"attn_mask": _causal(lq, lk)},
    "attn3d": lambda lq, lk: {"attn_mask": _causal(lq, lk).repeat(B * 2, 1, 1)},
    "padding": lambda lq, lk: {"key_padding_mask": _padding(lk)},
    "both": lambda lq, lk: {"attn_mask": _causal(lq, lk), "key_padding_mask": _padding(lk)},
}


@pytest.mark.parametrize(
    ("cross", "masks", "need_weights"),
    list(itertools.product((False, True), MHA_MASKS, (None, False, True))),
)
def test_attention_masks_match_torch(cross: bool, masks: str, need_weights: bool | None) -> None:
    torch.manual_seed(0)
    layer = L.MultiheadAttention(2).eval()
    q = torch.randn(B, LQ, D)
    kv = torch.randn(B, LK, D) if cross else q
    inputs = [q, kv] if cross else [q]
    kw = MHA_MASKS[masks](LQ, kv.shape[1])
    if need_weights is not None:
        kw["need_weights"] = need_weights
    symbolic = layer([Placeholder(tuple(t.shape)) for t in inputs], **_as_placeholders(kw))
    got = layer(inputs, **kw)
    native = layer.native_module().attention
    ref = native(q, kv, kv, need_weights=bool(need_weights), **_torch_masks(kw))
    if need_weights:
        assert isinstance(got, tuple)
        assert torch.allclose(got[0], ref[0], atol=1e-6)
        assert torch.allclose(got[1], ref[1], atol=1e-6)
        assert [p.shape[1:] for p in symbolic] == [t.shape[1:] for t in got]
    else:
        assert torch.allclose(got, ref[0], atol=1e-6)
        assert symbolic.shape[1:] == got.shape[1:]


def _as_placeholders(kw: dict[str, Any]) -> dict[str, Any]:
    return {
        k: Placeholder(tuple(v.shape)) if isinstance(v, torch.Tensor) else v for k, v in kw.items()
    }


def _torch_masks(kw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if k in ("attn_mask", "key_padding_mask")}


def test_is_causal_alone_makes_the_causal_mask() -> None:
    torch.manual_seed(0)
    x = torch.randn(B, LQ, D)
    padding = _padding(LQ)
    mha = L.MultiheadAttention(2).eval()
    got = mha(x, is_causal=True, key_padding_mask=padding)
    ref = mha(x, attn_mask=_causal(LQ, LQ), key_padding_mask=padding)
    assert torch.allclose(got, ref, atol=1e-6)

    float_mask = nn.Transformer.generate_square_subsequent_mask(LQ)
    layers: list[tuple[L.Layer, list[torch.Tensor], dict[str, Any], dict[str, Any]]] = []
    enc = L.TransformerEncoderLayer(2, dim_feedforward=16, dropout=0.0)
    layers.append((enc, [x], {"is_causal": True}, {"src_mask": float_mask}))
    stack = L.TransformerEncoder(L.TransformerEncoderLayer(2, 16, 0.0), 2, norm=L.LayerNorm())
    layers.append((stack, [x], {"is_causal": True}, {"mask": float_mask}))
    memory = torch.randn(B, LK, D)
    for dec in (
        L.TransformerDecoderLayer(2, dim_feedforward=16, dropout=0.0),
        L.TransformerDecoder(L.TransformerDecoderLayer(2, 16, 0.0), 2),
    ):
        layers.append((dec, [x, memory], {"tgt_is_causal": True}, {"tgt_mask": float_mask}))
    whole = L.Transformer(2, 1, 1, 16, 0.0)
    src_mask = {"src_mask": nn.Transformer.generate_square_subsequent_mask(LK)}
    layers.append((whole, [memory, x], {"src_is_causal": True}, src_mask))
    for layer, inputs, flag, explicit in layers:
        layer.eval()
        with torch.no_grad():
            got = layer(inputs, **flag)
            ref = layer(inputs, **explicit)
        assert torch.allclose(got, ref, atol=1e-5), type(layer).__name__


def test_transformer_masks_in_a_functional_model_round_trip() -> None:
    src = Placeholder((None, None, D))
    tgt = Placeholder((None, None, D))
    pad = Placeholder((None, None))
    out = L.Transformer(2, 1, 1, 16, 0.0)(
        [src, tgt], tgt_is_causal=True, src_key_padding_mask=pad, memory_key_padding_mask=pad
    )
    model = L.Functional([src, tgt, pad], out).eval()
    assert out.shape == (None, None, D)
    assert "tgt_is_causal=True" in model.code
    again = L.from_spec(model.to_yaml())
    again.load_state_dict(model.state_dict())
    again.eval()
    s, t, p = torch.randn(B, 6, D), torch.randn(B, 3, D), _padding(6)
    with torch.no_grad():
        ref = model.transformer(
            s,
            t,
            tgt_mask=nn.Transformer.generate_square_subsequent_mask(3),
            src_key_padding_mask=p,
            memory_key_padding_mask=p,
            tgt_is_causal=True,
        )
        assert torch.allclose(model(s, t, p), ref, atol=1e-5)
        assert torch.allclose(again(s, t, p), ref, atol=1e-5)


def test_masks_are_checked_on_every_path_batch_included() -> None:
    # A Functional (and a Sequential) calls the modules its layers built, not the layers:
    # the check runs there too, against the tensors of that call.
    s, t = torch.randn(B, 7, D), torch.randn(B, LQ, D)
    src, tgt, pad = (
        Placeholder((None, None, D)),
        Placeholder((None, None, D)),
        Placeholder((None, None)),
    )
    memory = L.TransformerEncoder(L.TransformerEncoderLayer(2), 1)(src, src_key_padding_mask=pad)
    out = L.TransformerDecoder(L.TransformerDecoderLayer(2), 1)(
        [tgt, memory], tgt_is_causal=True, memory_key_padding_mask=pad
    )
    seq2seq = L.Functional([src, tgt, pad], out)
    q, kv = Placeholder((None, None, D)), Placeholder((None, None, D))
    attend = L.Functional([q, kv, pad], L.MultiheadAttention(2)([q, kv], key_padding_mask=pad))
    encoder = L.TransformerEncoder(L.TransformerEncoderLayer(2), 1)
    calls: dict[str, Callable[[torch.Tensor], object]] = {
        "src_key_padding_mask": lambda m: seq2seq(s, t, m),
        "key_padding_mask": lambda m: attend(t, s, m),
    }
    for key, call in calls.items():
        assert call(torch.zeros(B, 7, dtype=torch.bool)).shape == (B, LQ, D)
        for bad in ((B, 6), (B + 1, 7)):
            with pytest.raises(ShapeError) as info:
                call(torch.zeros(bad, dtype=torch.bool))
            assert f"{key} does not fit the inputs; expected input {key} ({B}, 7)" in str(
                info.value
            ) and f"got shape {bad}" in str(info.value)
    with pytest.raises(ShapeError, match=r"src_key_padding_mask \(2, 7\); got shape \(3, 7\)"):
        encoder(s, src_key_padding_mask=torch.zeros(B + 1, 7, dtype=torch.bool))
    # a 3-d attention mask is one (query, key) mask per sample and head
    assert encoder(s, mask=torch.zeros(B * 2, 7, 7, dtype=torch.bool)).shape == s.shape
    with pytest.raises(ShapeError, match=r"mask \(7, 7\) or \(4, 7, 7\); got shape \(6, 7, 7\)"):
        encoder(s, mask=torch.zeros(B * 3, 7, 7, dtype=torch.bool))


def test_a_3d_attention_mask_misfit_hint_gives_the_3d_form() -> None:
    x = torch.randn(B, 7, D)
    mha = L.MultiheadAttention(2)
    with pytest.raises(ShapeError) as info:
        mha(x, attn_mask=torch.zeros(B * 3, 7, 7, dtype=torch.bool))
    assert str(info.value).endswith(
        "hint: a padding mask is (batch, key length); an attention mask is "
        "(query length, key length) or (batch * num_heads, query length, key length)"
    )


def test_initial_state_is_checked_inside_a_functional_batch_included() -> None:
    src, h, c = Placeholder((None, None, D)), Placeholder((1, None, 16)), Placeholder((1, None, 16))
    lstm = L.Functional([src, h, c], L.LSTM(16)(src, initial_state=(h, c)))
    gru = L.Functional([src, h], L.GRU(16)(src, initial_state=h))
    x, state = torch.randn(B, LQ, D), torch.zeros(1, B, 16)
    assert lstm(x, state, state).shape == gru(x, state).shape == (B, 16)
    other = torch.zeros(1, B + 1, 16)
    for call in (lambda: lstm(x, other, state), lambda: gru(x, other)):
        with pytest.raises(
            ShapeError, match=r"initial_state does not fit.*\(1, 2, 16\).*got shape \(1, 3, 16\)"
        ):
            call()


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Count the calls of ``module.name`` (a check) from now on."""
    calls: list[int] = []
    check = getattr(module, name)

    def counted(*args: Any) -> None:
        calls.append(1)
        check(*args)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_run_checks_its_masks_and_state_once_on_every_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # one check per run, whoever calls the module: the layer itself, or a Functional
    masks = _counting(monkeypatch, _attention, "check_mask")
    states = _counting(monkeypatch, _recurrent, "check_state")
    x, pad, h0 = torch.randn(B, LQ, D), torch.zeros(B, LQ, dtype=torch.bool), torch.zeros(1, B, 16)
    mha, gru = L.MultiheadAttention(2), L.GRU(16)
    mha(x, key_padding_mask=pad)
    gru(x, initial_state=h0)
    src, mask, h = Placeholder((None, LQ, D)), Placeholder((None, LQ)), Placeholder((1, None, 16))
    attend = L.Functional([src, mask], L.MultiheadAttention(2)(src, key_padding_mask=mask))
    start = L.Functional([src, h], L.GRU(16)(src, initial_state=h))
    masks.clear()
    states.clear()
    for _ in range(3):
        mha(x, key_padding_mask=pad)
        attend(x, pad)
        gru(x, initial_state=h0)
        start(x, h0)
    assert (len(masks), len(states)) == (6, 6)
    # a direct call still refuses what is not a mask, a flag or a state
    with pytest.raises(TypeError, match="need_weights=1; expected True or False"):
        mha(x, need_weights=1)
    with pytest.raises(TypeError, match="key_padding_mask must be one tensor"):
        mha(x, key_padding_mask=[pad])
    with pytest.raises(ShapeError, match="initial_state must be one tensor h0"):
        gru(x, initial_state=[h0, h0])
    with pytest.raises(TypeError, match=r"keyword initial_state=.*\(object\) is not accepted"):
        gru(x, initial_state=object())
    # and so does a compiled one, which runs the same module (and its check)
    torch.compiler.reset()
    compiled = torch.compile(mha, backend="eager")
    assert torch.equal(compiled(x, key_padding_mask=pad), mha(x, key_padding_mask=pad))
    with pytest.raises(ShapeError, match=r"key_padding_mask \(2, 5\); got shape \(2, 4\)"):
        compiled(x, key_padding_mask=pad[:, :4])


def test_bad_call_keywords_are_clear_errors() -> None:
    q = Placeholder((None, LQ, D))
    kv = Placeholder((None, LK, D))
    mha = L.MultiheadAttention(2)
    with pytest.raises(
        ShapeError, match=r"key_padding_mask does not fit.*\(batch, 4\).*\(batch, 5\)"
    ):
        mha([q, kv], key_padding_mask=Placeholder((None, LQ)))
    with pytest.raises(ShapeError, match=r"attn_mask does not fit.*\(5, 4\)"):
        mha([q, kv], attn_mask=Placeholder((None, LK, LK)))
    with pytest.raises(TypeError, match=r"unexpected call keyword\(s\) \['mask'\].*attn_mask"):
        mha([q, kv], mask=Placeholder((None, LK)))
    with pytest.raises(TypeError, match="is_causal='yes'; expected True or False"):
        L.MultiheadAttention(2)(q, is_causal="yes")
    with pytest.raises(TypeError, match="in a call on Placeholders it must be a Placeholder"):
        L.MultiheadAttention(2)(q, attn_mask=torch.zeros(LQ, LQ))
    with pytest.raises(ShapeError, match="tgt_mask does not fit"):
        L.TransformerDecoderLayer(2)(
            torch.randn(B, LQ, D), torch.randn(B, LK, D), tgt_mask=_causal(LK, LK)
        )
    with pytest.raises(TypeError, match="a call accepts no keywords"):
        L.Linear(3)(Placeholder((None, 4)), mask=None)
    with pytest.raises(
        TypeError, match=r"L.TransformerEncoder: encoder_layer=.*TransformerEncoderLayer"
    ):
        L.TransformerEncoder(L.Linear(3), 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_layers=0"):
        L.TransformerDecoder(L.TransformerDecoderLayer(2), 0)


@pytest.mark.parametrize(
    ("kind", "bidirectional", "num_layers"),
    list(itertools.product(("RNN", "GRU", "LSTM"), (False, True), (1, 2))),
)
def test_initial_state_matches_torch(kind: str, bidirectional: bool, num_layers: int) -> None:
    torch.manual_seed(0)
    layer = getattr(L, kind)(
        6, num_layers=num_layers, bidirectional=bidirectional, return_sequences=True
    )
    x = torch.randn(B, 7, 3)
    dirs = 2 if bidirectional else 1
    h0 = torch.randn(dirs * num_layers, B, 6)
    state: Any = (h0, torch.randn(dirs * num_layers, B, 6)) if kind == "LSTM" else h0
    got = layer(x, initial_state=state)
    ref, _ = layer.native_module().rnn(x, state)
    assert torch.equal(got, ref)
    assert not torch.equal(got, layer(x))
    wrong = torch.randn(dirs * num_layers + 1, B, 6)
    with pytest.raises(ShapeError, match="initial_state does not fit"):
        layer(x, initial_state=(wrong, wrong) if kind == "LSTM" else wrong)


def test_state_of_one_recurrent_layer_starts_another() -> None:
    src = Placeholder((None, None, 3))
    tgt = Placeholder((None, None, 4))
    _, state = L.LSTM(6, return_state=True)(src)
    out = L.LSTM(6, return_sequences=True)(tgt, initial_state=state)
    model = L.Functional([src, tgt], out)
    assert out.shape == (None, None, 6)
    s, t = torch.randn(B, 5, 3), torch.randn(B, 9, 4)
    _, (h, c) = model.lstm.rnn(s)
    assert torch.equal(model(s, t), model.lstm_1.rnn(t, (h, c))[0])
    again = L.from_spec(model.to_json())
    again.load_state_dict(model.state_dict())
    assert torch.equal(again(s, t), model(s, t))
    with pytest.raises(ShapeError, match=r"initial_state must be a pair \(h0, c0\)"):
        L.LSTM(6)(tgt, initial_state=state[0])
    with pytest.raises(ShapeError, match=r"\(1, batch, 5\)"):
        L.GRU(5)(tgt, initial_state=state[0])


# layer, shape with unknown (None) sizes, the sizes to run them with
UNKNOWN: list[tuple[str, Callable[[], L.Layer], tuple[int | None, ...]]] = [
    ("conv1d", lambda: L.Conv1d(4, 3, stride=2, padding=1), (None, 3, None)),
    ("conv2d", lambda: L.Conv2d(4, 3, dilation=2), (None, 3, None, None)),
    ("convt", lambda: L.ConvTranspose2d(2, 3, stride=2), (None, 3, None, 6)),
    ("maxpool", lambda: L.MaxPool2d(2, ceil_mode=True, return_indices=True), (None, 2, None, 7)),
    ("adaptive", lambda: L.AdaptiveAvgPool2d(3), (None, 2, None, None)),
    ("upsample", lambda: L.Upsample(scale_factor=2), (None, 2, None)),
    ("pad", lambda: L.ReflectionPad1d(2), (None, 2, None)),
    ("layernorm", lambda: L.LayerNorm(), (None, None, 6)),
    ("linear", lambda: L.Linear(3), (None, None, 6)),
    ("glu", lambda: L.GLU(dim=1), (None, None, 6)),
    ("embedding", lambda: L.Embedding(10, 4), (None, None)),
    ("lstm", lambda: L.LSTM(5, return_sequences=True, return_state=True), (None, None, 3)),
    ("mha", lambda: L.MultiheadAttention(2, need_weights=True), (None, None, 8)),
    ("encoder", lambda: L.TransformerEncoderLayer(2, 16), (None, None, 8)),
    ("flatten", lambda: L.Flatten(), (None, 3, None)),
    ("unfold", lambda: L.Unfold(2), (None, 2, None, 5)),
    (
        "seq",
        lambda: L.Sequential(L.Conv1d(4, 3), L.ReLU(), L.AdaptiveMaxPool1d(2), L.Flatten()),
        (None, 2, None),
    ),
    ("time", lambda: L.TimeDistributed(L.Linear(3)), (None, None, 5)),
    ("lambda", lambda: L.Lambda(lambda x: x[:, 1:] * 2), (None, None, 3)),
]


def _shapes(out: Any) -> Any:
    return tuple(out.shape) if isinstance(out, torch.Tensor) else [_shapes(o) for o in out]


def _agrees(predicted: Any, real: Any) -> bool:
    if isinstance(predicted, tuple):
        return len(predicted) == len(real) and all(
            p is None or p == r for p, r in zip(predicted, real, strict=True)
        )
    return all(_agrees(p, r) for p, r in zip(predicted, real, strict=True))


@pytest.mark.parametrize(("label", "make", "shape"), UNKNOWN, ids=[u[0] for u in UNKNOWN])
def test_unknown_sizes_are_inferred_where_possible(
    label: str, make: Callable[[], L.Layer], shape: tuple[int | None, ...]
) -> None:
    layer = make().eval()
    predicted = layer(Placeholder(shape))
    predicted_shapes = _shapes_of(predicted)
    integer = label == "embedding"
    for size in (8, 14):
        concrete = tuple(2 if i == 0 else (size if d is None else d) for i, d in enumerate(shape))
        x = torch.randint(0, 10, concrete) if integer else torch.randn(concrete)
        with torch.no_grad():
            real = _shapes(layer(x))
        assert _agrees(predicted_shapes, real), (predicted_shapes, real)


def _shapes_of(value: Any) -> Any:
    if isinstance(value, Placeholder):
        return value.shape
    return [_shapes_of(v) for v in value]


def test_a_layer_sized_from_an_unknown_dimension_says_so() -> None:
    x = Placeholder((None, 3, None))
    with pytest.raises(
        ShapeError,
        match=r"Linear needs a known size for dimension 1 \(it sets in_features\).*\(batch, \?\)",
    ):
        L.Linear(4)(L.Flatten()(x))
    with pytest.raises(ShapeError, match=r"Conv1d needs a known size for dimension 1.*in_channels"):
        L.Conv1d(4, 3)(Placeholder((None, None, 8)))
    with pytest.raises(ShapeError, match="were tried as 5040 and 10080"):
        L.Reshape((4, 3))(x)
    model = L.Sequential(L.Conv1d(4, 3), L.AdaptiveAvgPool1d(1), L.Flatten(), L.Linear(2))
    model.build((None, 3, None))
    assert model(torch.randn(2, 3, 11)).shape == model(torch.randn(2, 3, 30)).shape == (2, 2)
    with pytest.raises(ShapeError, match="expected input"):
        model(torch.randn(2, 4, 11))
    assert L.summary(model, (None, 3, None)).count("(batch, 4, ?)") == 1


def test_lambda_output_shape_function() -> None:
    def halves(shape: tuple[int | None, ...]) -> list[tuple[int | None, ...]]:
        return [(*shape[:-1], shape[-1] // 2)] * 2 if shape[-1] else [shape, shape]

    def split(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(x.chunk(2, -1))

    L.register_lambda("test_calls.split", split)
    L.register_lambda("test_calls.halves", halves)
    x = Placeholder((None, 4, 6))
    a, b = L.Lambda(split, output_shape=halves)(x)
    assert a.shape == b.shape == (None, 4, 3)
    model = L.Functional(x, L.Add()([a, b]))
    again = L.from_spec(model.to_json())
    t = torch.randn(2, 4, 6)
    assert torch.equal(again(t), t[..., :3] + t[..., 3:])
    with pytest.raises(L.SpecError, match="output_shape function is not registered"):
        L.Lambda(split, output_shape=lambda s: s).to_spec()
    with pytest.raises(ShapeError, match="output_shape function returned 'x'"):
        L.Lambda(split, output_shape=lambda s: "x")(x)
