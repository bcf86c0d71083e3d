"""Spec values keep their JSON/YAML types: "false" is a string, never a boolean."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import torchx.layers as L
from torchx.layers import SpecError
from torchx.layers._registry import LAYER_TYPES
from torchx.layers._torch_layer import TorchLayer


def _spec(kind: str, config: dict[str, Any]) -> dict[str, Any]:
    return {"format_version": 1, "type": kind, "config": config}


def test_a_string_false_bias_is_refused_not_read_as_true() -> None:
    with pytest.raises(SpecError) as info:
        L.from_spec(_spec("Linear", {"out_features": 3, "bias": "false"}))
    message = str(info.value)
    assert "\n" not in message
    assert "(Linear)" in message
    assert "config.bias='false'" in message
    assert "write bias: false, a boolean without quotes" in message


def test_a_string_affine_in_yaml_is_refused_with_the_layers_place() -> None:
    text = (
        "format_version: 1\ntype: Sequential\nconfig:\n  layers:\n"
        "  - {type: Conv2d, config: {out_channels: 4, kernel_size: 3}}\n"
        '  - {type: BatchNorm2d, config: {affine: "false"}}\n'
    )
    with pytest.raises(SpecError) as info:
        L.from_spec(text)
    message = str(info.value)
    assert message.startswith("Sequential.config.layers[1] (BatchNorm2d): config.affine='false'")
    assert "takes a boolean" in message


def test_the_same_spec_with_real_booleans_builds_what_it_says() -> None:
    linear = L.from_spec(_spec("Linear", {"out_features": 3, "bias": False}))
    linear.build((None, 5))
    assert linear.native_module().bias is None
    norm = L.from_spec("format_version: 1\ntype: BatchNorm2d\nconfig: {affine: false}\n")
    norm.build((None, 4, 8, 8))
    assert norm.native_module().weight is None


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"out_features": "3"}, "config.out_features='3' is a string, but out_features takes an"),
        ({"out_features": 3.0}, "config.out_features=3.0 is a float"),
        ({"out_features": True}, "config.out_features=True is a boolean"),
        ({"out_features": 3, "bias": 1}, "config.bias=1 is an integer, but bias takes a boolean"),
        ({"out_features": [3]}, "config.out_features=[3] is a list"),
    ],
)
def test_numbers_and_booleans_do_not_stand_in_for_each_other(
    config: dict[str, Any], words: str
) -> None:
    with pytest.raises(SpecError, match=words.replace("[", r"\[").replace("]", r"\]")):
        L.from_spec(_spec("Linear", config))


def test_sizes_in_a_list_are_numbers() -> None:
    with pytest.raises(SpecError, match=r"config.kernel_size\[1\]='3' is a string"):
        L.from_spec(_spec("Conv2d", {"out_channels": 4, "kernel_size": [3, "3"]}))


def test_an_int_is_a_valid_float_and_null_a_valid_optional() -> None:
    layer = L.from_spec(_spec("BatchNorm1d", {"eps": 1, "momentum": None}))
    assert layer.get_config() == {"eps": 1, "momentum": None}


def _typed_fields() -> list[tuple[str, str, Any]]:
    """Every (layer type, argument, default) whose default is a bool, an int or a float.

    Found from the signatures, apart from the check itself, so a layer whose argument
    the check missed shows up here.
    """
    found = []
    for kind, cls in sorted(LAYER_TYPES.items()):
        if not issubclass(cls, TorchLayer) or not hasattr(cls, "torch_cls"):
            continue
        for p in cls.signature().parameters.values():
            # a Conv's padding is a number or the word "same"/"valid", a string by design
            if p.name == "padding" and kind.startswith("Conv") and "Transpose" not in kind:
                continue
            if type(p.default) in (bool, int, float):
                found.append((kind, p.name, p.default))
    return found


TYPED = _typed_fields()


def test_the_sweep_covers_the_common_layers() -> None:
    kinds = {kind for kind, _, _ in TYPED}
    assert {"Linear", "Conv2d", "BatchNorm2d", "LSTM", "Dropout", "LayerNorm"} <= kinds
    assert len(TYPED) > 150


@pytest.mark.parametrize(("kind", "field", "default"), TYPED, ids=[f"{k}.{f}" for k, f, _ in TYPED])
def test_every_bool_int_and_float_argument_refuses_a_string(
    kind: str, field: str, default: Any
) -> None:
    text = str(default).lower() if isinstance(default, bool) else str(default)
    with pytest.raises(SpecError) as info:
        L.from_spec(_spec(kind, {field: text}))
    assert f"({kind}): config.{field}={text!r} is a string" in str(info.value)


BOOLS = [(k, f, d) for k, f, d in TYPED if isinstance(d, bool)]


@pytest.mark.parametrize(("kind", "field", "default"), BOOLS, ids=[f"{k}.{f}" for k, f, _ in BOOLS])
def test_every_bool_argument_refuses_a_number(kind: str, field: str, default: bool) -> None:
    with pytest.raises(SpecError, match=f"config.{field}={int(default)} is an integer"):
        L.from_spec(_spec(kind, {field: int(default)}))


def test_the_check_reads_torch_annotations_where_a_layer_lists_its_own_arguments() -> None:
    # RNN/GRU/LSTM name their arguments themselves; the kinds come from torch's RNNBase
    assert "hidden_size" not in {f for k, f, _ in TYPED if k == "LSTM"}
    with pytest.raises(SpecError, match=r"config.hidden_size='8' is a string"):
        L.from_spec(_spec("LSTM", {"hidden_size": "8"}))
    assert inspect.signature(L.LSTM).parameters  # the Python constructor is unchanged
