"""Sequential with plain modules, TimeDistributed, Lambda, summary."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torchx.layers as L


def test_sequential_mixes_plain_modules() -> None:
    model = L.Sequential(
        nn.Conv2d(3, 8, 3),
        L.BatchNorm2d(),
        nn.AdaptiveAvgPool2d((2, 3)),
        L.Flatten(),
        L.Linear(5),
    )
    assert model.build((None, 3, 10, 10)) == (None, 5)
    assert model[4].native_module().in_features == 8 * 2 * 3
    assert model(torch.randn(2, 3, 10, 10)).shape == (2, 5)
    assert type(model.native_module()) is nn.Sequential


def test_nested_sequential() -> None:
    block = L.Sequential(L.Linear(6), L.ReLU())
    model = L.Sequential(block, L.Linear(2))
    assert model(torch.randn(3, 4)).shape == (3, 2)
    assert model.native_module()[0][0].in_features == 4


def test_time_distributed_applies_layers_per_step() -> None:
    td = L.TimeDistributed(L.Conv2d(4, 3), L.Flatten(), L.Linear(5))
    x = torch.randn(2, 6, 3, 8, 8)
    y = td(x)
    assert y.shape == (2, 6, 5)
    inner = td.inner.native_module()
    expected = torch.stack([inner(x[:, t]) for t in range(6)], 1)
    assert torch.allclose(y, expected, atol=1e-6)
    assert td(torch.randn(3, 9, 3, 8, 8)).shape == (3, 9, 5)  # time is free
    seq = L.Sequential(L.TimeDistributed(L.Linear(4)), L.GRU(3))
    assert seq(torch.randn(2, 7, 5)).shape == (2, 3)


def test_lambda_infers_or_takes_its_output_shape() -> None:
    square = L.Lambda(lambda x: x[:, :2] ** 2)
    assert square.build((None, 5)) == (None, 2)
    fixed = L.Lambda(torch.flatten, output_shape=(12,))
    x = L.Placeholder((None, 3, 4))
    assert fixed(L.Lambda(lambda a: a.flatten(1))(x)).shape == (None, 12)
    pair = L.Lambda(lambda a, b: a + b)
    assert pair([x, x]).shape == (None, 3, 4)
    assert torch.equal(square(torch.ones(2, 5)), torch.ones(2, 2))


def test_summary_lists_shapes_and_parameters_without_running() -> None:
    model = L.Sequential(L.Conv2d(4, 3), nn.ReLU(), L.Flatten(), L.Linear(2))
    text = L.summary(model, (None, 3, 6, 6))
    assert "Sequential.0  Conv2d" in text
    assert "(batch, 4, 4, 4)" in text
    assert "(batch, 64)" in text
    total = sum(p.numel() for p in model.parameters())
    assert f"total params: {total:,}" in text
    with pytest.raises(ValueError, match="input_shape=None"):
        L.summary(L.Sequential(L.Linear(2)))


def test_summary_of_functional_counts_shared_layers_once() -> None:
    a = L.Placeholder((None, 4))
    dense = L.Linear(4)
    model = L.Functional(a, dense(dense(a)))
    text = L.summary(model)
    assert text.count("Linear") == 2
    assert "total params: 20" in text


def test_standalone_layer_registers_parameters_when_built() -> None:
    layer = L.Conv1d(5, 3)
    with pytest.raises(RuntimeError, match=r"not built yet.*build\(input_shape\)"):
        layer.parameters()  # an empty list here would give an optimizer nothing to train
    layer(torch.randn(2, 4, 9))
    assert sum(p.numel() for p in layer.parameters()) == 5 * 4 * 3 + 5


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_layer_built_from_a_cuda_tensor_lives_on_cuda() -> None:
    model = L.Sequential(L.Conv2d(4, 3), L.Flatten(), L.Linear(2))
    y = model(torch.randn(2, 3, 8, 8, device="cuda"))
    assert y.device.type == "cuda"
    assert all(p.device.type == "cuda" for p in model.parameters())


def test_a_module_listed_twice_runs_twice_as_in_nn_sequential() -> None:
    torch.manual_seed(0)
    act = nn.Tanh()
    model = L.Sequential(L.Linear(4), act, L.Linear(4), act)
    x = torch.randn(2, 3)
    model(x)
    first, second = model[0].native_module(), model[2].native_module()
    assert torch.equal(model(x), torch.tanh(second(torch.tanh(first(x)))))
    assert len(model.native_module()) == 4


def test_a_module_replaced_after_the_build_is_the_one_called() -> None:
    model = L.Sequential(L.Linear(4), nn.ReLU())
    x = -torch.ones(2, 3)
    model(x)
    setattr(model, "1", nn.Identity())  # as one would swap a module of an nn.Sequential
    assert torch.equal(model(x), model[0].native_module()(x))
    model.add_module("1", nn.Sigmoid())
    assert torch.equal(model(x), torch.sigmoid(model[0].native_module()(x)))
