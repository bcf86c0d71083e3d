"""Specs as data, JSON and YAML; state_dict loads into a model rebuilt from its spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import torchx.layers as L
from torchx.layers import SpecError


def _functional() -> L.Functional:
    x = L.Placeholder((None, 3, 16, 16))
    tokens = L.Placeholder((None, 5))
    a = L.Conv2d(4, 3, padding="same")(x)
    b = L.BatchNorm2d()(L.Conv2d(4, (3, 3), padding=1, bias=False)(x))
    merged = (a * b + 1.5)[:, :, 2:-2].flatten()
    seq = L.LSTM(6, return_sequences=True)(L.Embedding(20, 8)(tokens))
    out = L.Concat()([L.Linear(5)(merged), L.Linear(5)(seq[:, -1])])
    return L.Functional(inputs={"image": x, "tokens": tokens}, outputs={"logits": out, "seq": seq})


def _inputs() -> dict[str, torch.Tensor]:
    return {"image": torch.randn(2, 3, 16, 16), "tokens": torch.randint(0, 20, (2, 5))}


@pytest.mark.parametrize("fmt", ["dict", "json", "yaml"])
def test_functional_round_trip_with_weights(fmt: str) -> None:
    model = _functional().eval()
    if fmt == "dict":
        again = L.from_spec(json.loads(json.dumps(model.to_spec())))
    elif fmt == "json":
        again = L.from_spec(model.to_json())
    else:
        again = L.from_spec(model.to_yaml())
    assert again.to_spec() == model.to_spec()
    again.load_state_dict(model.state_dict())
    again.eval()
    out, ref = again(_inputs()), None
    ref = model(_inputs())
    inputs = _inputs()
    assert torch.equal(again(inputs)["logits"], model(inputs)["logits"])
    assert out["seq"].shape == ref["seq"].shape == (2, 5, 6)


def test_spec_has_a_format_version_and_is_plain_data() -> None:
    spec = L.Sequential(L.Linear(3), L.ReLU()).to_spec()
    assert spec["format_version"] == L.SPEC_FORMAT_VERSION
    assert spec["type"] == "Sequential"
    json.dumps(spec)  # plain data only


L.register_lambda("test_spec.halves", lambda x: x)


def test_every_layer_type_round_trips() -> None:
    layers = [
        L.Conv1d(4, 3, dilation=2),
        L.ConvTranspose2d(3, (2, 3), stride=2),
        L.MaxPool2d(2, return_indices=False),
        L.AdaptiveAvgPool2d((None, 2)),
        L.GroupNorm(2),
        L.LayerNorm(normalized_ndim=2),
        L.PReLU(shared=True),
        L.Upsample(scale_factor=2.0),
        L.ReplicationPad2d((1, 2, 0, 1)),
        L.Dropout2d(0.1),
        L.Reshape((4, -1)),
        L.Permute((0, 2, 3, 1)),
        L.Unflatten(1, (2, 2)),
        L.MaxUnpool2d(2, output_size=[5, 4]),
        L.Fold((4, 4), 2, stride=2),
        L.Unfold((2, 3), padding=1),
        L.ChannelShuffle(2),
        L.CrossMapLRN2d(3, alpha=1e-3),
        L.Transformer(2, 1, 1, 16, norm_first=True),
        L.TransformerDecoder(L.TransformerDecoderLayer(2, 16), 2, norm=L.LayerNorm()),
        L.Lambda("test_spec.halves", output_shape="test_spec.halves"),
    ]
    for layer in layers:
        spec = layer.to_spec()
        again = L.from_spec(spec)
        assert type(again) is type(layer)
        assert again.to_spec() == spec


def test_save_and_load_spec_files(tmp_path: Path) -> None:
    model = L.Sequential(L.Conv2d(2, 3), L.Flatten(), L.Linear(4))
    model.build((None, 1, 5, 5))
    for name in ("m.json", "m.yaml"):
        L.save_spec(model, tmp_path / name)
        again = L.load_spec(tmp_path / name)
        assert again.built and again.output_shape == (None, 4)
        again.load_state_dict(model.state_dict())
    assert (tmp_path / "m.yaml").read_text().startswith("format_version: 1")


def test_lambda_serializes_by_registered_name_only() -> None:
    @L.register_lambda("test_spec.double")
    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    model = L.Sequential(L.Linear(3), L.Lambda(double))
    model.build((None, 4))
    again = L.from_spec(model.to_json())
    again.load_state_dict(model.state_dict())
    x = torch.randn(2, 4)
    assert torch.equal(again(x), model(x))
    assert "test_spec.double" in model.to_json()

    anonymous = L.Sequential(L.Lambda(lambda x: x + 1))
    with pytest.raises(SpecError, match="not registered"):
        anonymous.to_spec()
    with pytest.raises(SpecError, match="not a registered name"):
        L.Lambda("no.such.function")


def test_plain_module_in_sequential_has_no_spec() -> None:
    with pytest.raises(TypeError, match="item 1 is a plain Tanh"):
        L.Sequential(L.Linear(2), torch.nn.Tanh()).to_spec()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "Linear", "config": {"out_features": 2}}, "format_version"),
        ({"format_version": 99, "type": "Linear", "config": {}}, "format_version=99"),
        (
            {"format_version": 1, "type": "Dense", "config": {}},
            "type='Dense' is not a known layer type;",
        ),
        (  # the known types are listed cut short, so a typo gets its match
            {"format_version": 1, "type": "Lienar", "config": {}},
            r"type='Lienar' is not a known layer type \(did you mean 'Linear'\?\)",
        ),
        (
            "format_version: 1\ntype: Relu\n",
            r"type='Relu' is not a known layer type \(did you mean 'ReLU'\?\)",
        ),
        (
            {"format_version": 1, "type": "Linear", "config": {"units": 2}},
            "bad config.*unexpected argument.*units.*out_features",
        ),
        (
            {"format_version": 1, "type": "Linear", "config": {"out_features": 2}, "extra": 1},
            "unknown field",
        ),
        ({"format_version": 1, "type": "Linear", "config": []}, "expected a mapping"),
        (
            {"format_version": 1, "type": "Linear", "config": {"out_features": -2}},
            "out_features=-2",
        ),
        ("{not json", "not valid JSON"),
        ("[1, 2", "not valid YAML"),
    ],
)
def test_bad_specs_are_clear_errors(spec: object, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        L.from_spec(spec)  # type: ignore[arg-type]


def test_built_transformer_stacks_round_trip_with_weights() -> None:
    src = L.Placeholder((None, None, 8))
    tgt = L.Placeholder((None, None, 8))
    encoder = L.TransformerEncoder(
        L.TransformerEncoderLayer(2, 16, 0.0, norm_first=True), 2, norm=L.LayerNorm()
    )
    decoder = L.TransformerDecoder(L.TransformerDecoderLayer(2, 16, 0.0), 2)
    memory = encoder(src, is_causal=True)
    out = decoder([tgt, memory], tgt_is_causal=True)
    pooled = L.MaxUnpool1d(2)(L.MaxPool1d(2, return_indices=True)(L.Permute((0, 2, 1))(out)))
    model = L.Functional([src, tgt], pooled).eval()
    again = L.from_spec(model.to_json())
    assert again.to_spec() == model.to_spec()
    again.load_state_dict(model.state_dict())
    again.eval()
    s, t = torch.randn(2, 5, 8), torch.randn(2, 4, 8)
    with torch.no_grad():
        assert torch.equal(again(s, t), model(s, t))
    assert model(s, t).shape == (2, 8, 4)
    assert len(list(model.transformer_encoder.layers)) == 2


def test_bad_stack_specs() -> None:
    spec = L.TransformerEncoder(L.TransformerEncoderLayer(2), 2).to_spec()
    spec["config"]["encoder_layer"] = {"type": "Nope"}
    with pytest.raises(SpecError, match=r"encoder_layer.type='Nope' is not a known layer type"):
        L.from_spec(spec)
