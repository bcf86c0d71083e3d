"""Bad shapes and bad arguments give one clear error naming where and what."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.nn.modules.module import (
    register_module_buffer_registration_hook,
    register_module_parameter_registration_hook,
)

import torchx.layers as L
from torchx.layers import Placeholder, ShapeError


def test_rank_mismatch_names_the_path_and_the_shapes() -> None:
    model = L.Sequential(L.Conv2d(4, 3), L.Flatten(), L.Conv2d(3, 3))
    with pytest.raises(ShapeError) as info:
        model(torch.randn(2, 3, 8, 8))
    message = str(info.value)
    assert "Sequential.2:Conv2d" in message
    assert "4-D input" in message
    assert "(batch, channels, H, W)" in message
    assert "got shape (2, 144)" in message
    assert "hint:" in message


def test_error_comes_from_placeholders_before_any_tensor() -> None:
    x = Placeholder((None, 3, 5, 5))
    with pytest.raises(ShapeError, match=r"output shape would be \(batch, 4, -1, -1\).*too small"):
        L.Conv2d(4, kernel_size=7)(x)


@pytest.mark.parametrize(
    "layer",
    [
        lambda: L.Conv2d(4, kernel_size=7),
        lambda: L.MaxPool2d(7),
        lambda: L.GLU(dim=1),
    ],
    ids=["conv-too-small", "pool-too-small", "glu-odd"],
)
def test_shape_error_before_the_layer_makes_its_parameters(layer: Any) -> None:
    # torch's global hook sees every parameter any module registers
    made: list[str] = []
    hook = register_module_parameter_registration_hook(
        lambda module, name, param: made.append(f"{type(module).__name__}.{name}")
    )
    try:
        with pytest.raises(ShapeError):
            layer().build((None, 3, 5, 5))
    finally:
        hook.remove()
    assert made == []


def test_nested_path_inside_functional() -> None:
    x = Placeholder((None, 10))
    body = L.Sequential(L.Linear(4), L.Reshape((3, -1)), name="body")
    with pytest.raises(
        ShapeError,
        match=r"layer 'body.1:Reshape'.*4 elements per sample cannot be viewed as \(3, -1\)",
    ):
        body(x)


def test_later_call_with_other_shape() -> None:
    layer = L.Linear(3)
    layer(torch.randn(2, 4))
    assert layer(torch.randn(7, 4)).shape == (7, 3)  # the batch is free
    with pytest.raises(
        ShapeError, match=r"layer 'Linear'.*expected input \(batch, 4\).*got shape \(2, 5\)"
    ):
        layer(torch.randn(2, 5))
    model = L.Sequential(L.Linear(3))
    model(torch.randn(2, 4))
    with pytest.raises(ShapeError, match="Sequential"):
        model(torch.randn(2, 6))


def _one_dim_sequential() -> L.Layer:
    return L.Sequential(L.ReLU())


def _one_dim_functional() -> L.Layer:
    x = Placeholder((None,))
    return L.Functional(x, L.ReLU()(x))


@pytest.mark.parametrize("make", [_one_dim_sequential, _one_dim_functional])
def test_a_model_built_for_a_batch_of_scalars_refuses_a_0d_tensor_on_every_call(
    make: Any,
) -> None:
    # a (batch,) input has no features: the () after its batch axis must not let a 0-d
    # tensor (whose shape[1:] is () too) past the check on later calls
    model = make()
    model(torch.randn(3))
    for _ in range(2):
        with pytest.raises(ShapeError, match=r"expected input \(batch,\); got shape \(\)"):
            model(torch.tensor(-1.0))
    assert model(torch.randn(5)).shape == (5,)


def test_sequence_layers_accept_any_length() -> None:
    lstm = L.LSTM(4, return_sequences=True)
    assert lstm(torch.randn(2, 5, 3)).shape == (2, 5, 4)
    assert lstm(torch.randn(2, 9, 3)).shape == (2, 9, 4)
    with pytest.raises(ShapeError):
        lstm(torch.randn(2, 9, 4))


def test_merge_and_concat_mismatch() -> None:
    a, b = Placeholder((None, 3)), Placeholder((None, 4))
    with pytest.raises(ShapeError, match=r"do not broadcast: \(batch, 3\), \(batch, 4\)"):
        L.Add()([a, b])
    with pytest.raises(ShapeError, match="must match in every dimension except 2"):
        L.Concat()([Placeholder((None, 2, 3)), Placeholder((None, 3, 3))])
    with pytest.raises(ShapeError, match="takes 2 input"):
        L.Subtract()([a, a, a])


def test_a_wrong_number_of_inputs_states_the_range() -> None:
    x = torch.zeros(2, 4)
    cases = [
        (lambda: L.Add()(x), "takes 2 to 64 inputs, got 1; hint: call it on a list"),
        (lambda: L.Add()(Placeholder((None, 4))), "takes 2 to 64 inputs, got 1; hint:"),
        (lambda: L.Maximum()([x] * 65), "takes 2 to 64 inputs, got 65"),
        (lambda: L.Subtract()([x] * 3), "takes 2 inputs, got 3"),
        (lambda: L.MultiheadAttention(2)([torch.zeros(2, 3, 4)] * 4), "takes 1 to 3 inputs, got 4"),
        (lambda: L.Linear(3)([x, x]), "takes 1 input, got 2"),
    ]
    for call, text in cases:
        with pytest.raises(ShapeError) as info:
            call()
        assert text in str(info.value) and len(str(info.value)) < 120, str(info.value)


def test_a_call_on_something_not_a_tensor_says_what_it_got() -> None:
    x = torch.zeros(2, 4)
    built = L.Sequential(L.Linear(3))
    built(x)
    i = Placeholder((None, 4))
    one = L.Functional(i, L.Linear(3)(i))
    a, b = Placeholder((None, 4)), Placeholder((None, 4))
    named = L.Functional({"a": a, "b": b}, L.Add()([a, b]))
    cases = [
        (
            lambda: L.Sequential(L.Linear(3))([x]),
            "'Sequential': input is a list of 1 item; expected a tensor",
        ),
        (
            lambda: built([x, x]),
            "'Sequential': input is a list of 2 items; expected a tensor (batch, 4)",
        ),
        (lambda: built(None), "'Sequential': input is None; expected a tensor (batch, 4)"),
        (lambda: L.Sequential(L.Linear(3))(3), "'Sequential': input is 3; expected a tensor"),
        (lambda: one([x]), "'Functional': input is a list of 1 item; expected a tensor (batch, 4)"),
        (lambda: one({"x": x}), "'Functional': input is a dict with keys ['x']; expected a tensor"),
        (lambda: named(a=x, b=None), "'Functional': input 1 is None; expected a tensor (batch, 4)"),
        (lambda: L.Linear(3)(None), "L.Linear 'Linear': input is None; expected a tensor"),
    ]
    for call, text in cases:
        with pytest.raises(TypeError) as info:
            call()
        assert text in str(info.value), str(info.value)
    assert built(x).shape == (2, 3)  # nothing was left half done


def test_groups_and_divisibility() -> None:
    with pytest.raises(ShapeError, match="not divisible by groups=2"):
        L.Conv2d(4, 3, groups=2)(Placeholder((None, 3, 8, 8)))
    with pytest.raises(ShapeError, match=r"channels \(3\) is not divisible by upscale_factor"):
        L.PixelShuffle(2)(Placeholder((None, 3, 4, 4)))
    with pytest.raises(ShapeError, match=r"W \(5\) is not divisible by downscale_factor=2"):
        L.PixelUnshuffle(2)(Placeholder((None, 3, 4, 5)))
    with pytest.raises(ShapeError, match="GLU splits dimension 2"):
        L.GLU()(Placeholder((None, 3, 5)))


def test_a_pixel_shuffle_factor_below_one_is_refused_at_construction() -> None:
    for cls, arg in ((L.PixelShuffle, "upscale_factor"), (L.PixelUnshuffle, "downscale_factor")):
        for bad in (0, -2, 1.5, True, "2", torch.tensor(2.0), torch.tensor(True)):
            with pytest.raises(ValueError) as e:
                cls(bad)
            assert str(e.value) == (
                f"L.{cls.__name__}: {arg}={bad!r}; expected an integer of at least 1 (not a bool)"
            )
        assert cls(1)(Placeholder((None, 3, 4, 4))).shape == (None, 3, 4, 4)


def test_a_pixel_shuffle_factor_may_be_any_integer_torch_takes() -> None:
    """A numpy integer or a one-element integer tensor, as torch takes it: stored as a
    plain int, so the layer saves as JSON and builds the module torch would."""
    np = pytest.importorskip("numpy")
    x = torch.arange(16.0).reshape(1, 4, 2, 2)
    for factor in (np.int64(2), np.int32(2), torch.tensor(2)):
        layer = L.PixelShuffle(factor)
        assert type(layer.args["upscale_factor"]) is int
        assert layer.get_config() == {"upscale_factor": 2}
        assert torch.equal(layer(x), torch.nn.PixelShuffle(2)(x))
        back = L.PixelUnshuffle(downscale_factor=factor)
        assert back.get_config() == {"downscale_factor": 2}
        assert torch.equal(back(layer(x)), x)


def test_bad_constructor_arguments() -> None:
    with pytest.raises(ValueError, match=r"L.Conv2d: out_channels=0; expected a positive int"):
        L.Conv2d(0, 3)
    with pytest.raises(TypeError, match=r"unexpected argument\(s\) \['units'\].*out_features"):
        L.Linear(units=3)
    with pytest.raises(TypeError, match="missing a required argument: 'kernel_size'"):
        L.Conv2d(3)
    with pytest.raises(ShapeError, match=r"torch.nn.Conv2d\(.*padding='same'.*failed"):
        L.Conv2d(3, 3, stride=2, padding="same")(Placeholder((None, 3, 8, 8)))


def test_a_padding_word_torch_does_not_take_is_named_not_a_failed_sum() -> None:
    # a typo in a spec's padding used to end in "unsupported operand type(s) for +"
    typo = L.from_spec(
        "format_version: 1\ntype: Conv2d\nconfig: {out_channels: 3, kernel_size: 3, padding: smae}"
    )
    with pytest.raises(
        ShapeError, match=r"layer 'Conv2d': padding='smae' is not a padding.*'valid'"
    ):
        typo.build((None, 2, 8, 8))


@pytest.mark.parametrize(
    "layer",
    [
        lambda: L.MaxPool2d(3, padding="same"),
        lambda: L.AvgPool2d(3, stride=1, padding="same"),
        lambda: L.ConvTranspose2d(3, 3, padding="same"),
        lambda: L.MaxUnpool2d(2, padding="same"),
    ],
)
def test_same_padding_where_only_sizes_go_names_the_layer_and_the_sizes(layer: Any) -> None:
    # 'same' is a convolution's word only; the message named neither the layer nor a fix
    made = layer()
    kind = type(made).__name__
    with pytest.raises(
        ShapeError,
        match=rf"layer '{kind}': padding='same': torch.nn.{kind} takes sizes.*hint: .*"
        r"padding=dilation \* \(kernel_size - 1\) // 2",
    ):
        made.build(*[(None, 2, 8, 8)] * (2 if kind == "MaxUnpool2d" else 1))


@pytest.mark.parametrize(
    ("layer", "field"),
    [
        (lambda: L.Conv2d(3, kernel_size=0), "kernel_size=0"),  # used to build, then fail
        (lambda: L.Conv2d(3, 3, stride=0), "stride=0"),  # used to divide by zero
        (lambda: L.Conv2d(3, 3, dilation=(1, 0)), r"dilation=\(1, 0\)"),
        (lambda: L.ConvTranspose2d(3, 3, stride=0), "stride=0"),
        (lambda: L.MaxPool2d((3, 0)), r"kernel_size=\(3, 0\)"),
        (lambda: L.AvgPool2d(3, stride=-1), "stride=-1"),  # used to blame the input size
        (lambda: L.MaxPool2d(3, dilation=0), "dilation=0"),
    ],
)
def test_a_window_size_below_one_is_named(layer: Any, field: str) -> None:
    with pytest.raises(ShapeError, match=rf"layer '\w+': {field}: every value must be at least 1"):
        layer().build((None, 2, 8, 8))


def test_an_upsample_mode_is_checked_while_building_not_at_the_first_call() -> None:
    # both used to build, then fail in the call with torch's NotImplementedError
    with pytest.raises(ShapeError, match=r"mode='bilinaer' is not an interpolation mode.*bilinear"):
        L.Upsample(scale_factor=2, mode="bilinaer").build((None, 3, 8, 8))
    with pytest.raises(ShapeError, match=r"mode='bilinear' needs a 4-D input; got shape \(batch"):
        L.Upsample(scale_factor=2, mode="bilinear").build((None, 3, 8))
    assert L.Upsample(scale_factor=2, mode="linear").build((None, 3, 8)) == (None, 3, 16)


def test_lanczos_is_refused_for_upsample_which_cannot_run_it() -> None:
    # it was offered as a mode, built, and failed at the call with torch's bare
    # "Lanczos mode requires antialias=True"
    with pytest.raises(ShapeError, match=r"layer 'Upsample': mode='lanczos' needs antialias.*"):
        L.Upsample(scale_factor=2, mode="lanczos").build((None, 3, 8, 8))
    with pytest.raises(ShapeError, match=r"not an interpolation mode") as refused:
        L.Upsample(scale_factor=2, mode="lanczso").build((None, 3, 8, 8))
    assert "lanczos" not in str(refused.value)


def test_bad_placeholder_shapes() -> None:
    with pytest.raises(ValueError, match="dimension 1 is 0"):
        Placeholder((None, 0))
    with pytest.raises(ValueError, match=r"dimension 2 is -1.*or None"):
        Placeholder((None, 3, -1))
    with pytest.raises(TypeError, match="expected a tuple of ints"):
        Placeholder("3x3")  # type: ignore[arg-type]


def test_native_module_before_build() -> None:
    with pytest.raises(RuntimeError, match="not built yet: call it on a tensor or a Placeholder"):
        L.Linear(2).native_module()


class _RealTensors:
    """Every real (not meta) parameter and buffer any module registers, via torch's hooks."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def _record(self, module: Any, name: str, tensor: Any) -> None:
        # an empty tensor holds no data: unbuilt layers register one to follow .to()/.half()
        if tensor is not None and not tensor.is_meta and tensor.numel() > 0:
            self.made.append(f"{type(module).__name__}.{name}")

    def __enter__(self) -> _RealTensors:
        self._hooks = [
            register_module_parameter_registration_hook(self._record),
            register_module_buffer_registration_hook(self._record),
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        for hook in self._hooks:
            hook.remove()


def _seq_last_bad() -> L.Sequential:
    return L.Sequential(
        L.Conv2d(8, 3), L.BatchNorm2d(), L.ReLU(), L.Flatten(), L.Linear(16), L.Conv2d(4, 3)
    )


def test_sequential_last_layer_mismatch_makes_no_tensor() -> None:
    model = _seq_last_bad()
    with _RealTensors() as seen, pytest.raises(ShapeError, match=r"Sequential\.5:Conv2d"):
        model.build((None, 3, 8, 8))
    assert seen.made == []
    # the failed build leaves every layer unbuilt, free to be built for another shape
    assert not any(layer.built for layer in model.items)
    assert not model.built
    # the same hooks do see a build that succeeds
    with _RealTensors() as seen:
        L.Sequential(*model.items[:5]).build((None, 3, 8, 8))
    assert "Conv2d.weight" in seen.made and "BatchNorm2d.running_mean" in seen.made


def test_sequential_constructor_error_in_last_layer_makes_no_tensor() -> None:
    # torch's own argument check (padding='same' needs stride 1) runs in the first pass
    model = L.Sequential(
        L.Linear(8), L.Unflatten(1, (2, 2, 2)), L.Conv2d(3, 1, stride=2, padding="same")
    )
    with _RealTensors() as seen, pytest.raises(ShapeError, match=r"Sequential\.2:Conv2d.*'same'"):
        model.build((None, 4))
    assert seen.made == []


def test_sequential_item_after_one_with_several_outputs() -> None:
    model = L.Sequential(L.Conv2d(4, 3), L.MaxPool2d(2, return_indices=True), L.Flatten())
    with (
        _RealTensors() as seen,
        pytest.raises(ShapeError, match=r"Sequential\.2:Flatten.*returns several tensors"),
    ):
        model.build((None, 3, 8, 8))
    assert seen.made == []
    assert not any(layer.built for layer in model.items)


def test_nested_sequential_mismatch_makes_no_tensor() -> None:
    head = L.Sequential(L.Flatten(), L.Linear(12), L.Reshape((5, -1)), name="head")
    model = L.Sequential(L.Sequential(L.Conv2d(4, 3), L.BatchNorm2d()), L.ReLU(), head)
    with (
        _RealTensors() as seen,
        pytest.raises(ShapeError, match=r"Sequential\.2:Sequential\.2:Reshape"),
    ):
        model.build((None, 3, 8, 8))
    assert seen.made == []
    assert not model.items[0].built and not model.items[0].items[0].built


def test_functional_output_layer_mismatch_makes_no_tensor() -> None:
    with _RealTensors() as seen:
        x = Placeholder((None, 3, 16, 16))
        h = L.BatchNorm2d()(L.Conv2d(8, 3)(x))
        h = L.Linear(10)(L.Flatten()(h))
        a, b = L.Linear(6)(h), L.Linear(7)(h)
        with pytest.raises(ShapeError, match=r"do not broadcast"):
            L.Add()([a, b])
        with pytest.raises(ShapeError, match=r"layer 'out'.*4-D input"):
            L.Conv2d(2, 1, name="out")(h)
    assert seen.made == []
    # the layers that did check out make their modules when a model is built from them
    with _RealTensors() as seen:
        model = L.Functional(x, a)
    assert seen.made.count("Conv2d.weight") == 1 and seen.made.count("Linear.weight") == 2
    assert model(torch.randn(2, 3, 16, 16)).shape == (2, 6)


def test_functional_nested_sub_model_mismatch_makes_no_tensor() -> None:
    x = Placeholder((None, 20))
    with _RealTensors() as seen:
        h = L.Linear(12)(x)
        inner = L.Sequential(L.Linear(6), L.ReLU(), L.Reshape((4, -1)), name="inner")
        with pytest.raises(ShapeError, match=r"layer 'inner\.2:Reshape'"):
            inner(h)
    assert seen.made == []
    assert not inner.built and not inner.items[0].built


def test_layer_without_formula_is_checked_on_meta_first() -> None:
    class Scale(L.TorchLayer):  # no _formula: shapes come from the meta device
        torch_cls = torch.nn.Linear
        inferred = ("in_features",)

        def _infer(self, shapes: list[Any]) -> dict[str, Any]:
            return {"in_features": shapes[0][-1]}

    model = L.Sequential(Scale(5), L.ReLU(), Scale(3), L.Reshape((2, -1)))
    with _RealTensors() as seen, pytest.raises(ShapeError, match=r"Sequential\.3:Reshape"):
        model.build((None, 4))
    assert seen.made == []
    with _RealTensors() as seen:
        out = model.items[0](torch.randn(2, 4))
    assert out.shape == (2, 5) and seen.made == ["Linear.weight", "Linear.bias"]


def test_a_layer_called_on_placeholders_makes_its_module_when_looked_at() -> None:
    layer = L.Linear(3)
    layer(Placeholder((None, 4)))
    assert layer.built
    assert [tuple(p.shape) for p in layer.parameters()] == [(3, 4), (3,)]
    other = L.Sequential(L.Linear(3), L.ReLU())
    other(Placeholder((None, 4)))
    assert other(torch.randn(2, 4)).shape == (2, 3)
    assert isinstance(other.native_module()[0], torch.nn.Linear)
