"""torchx.layers built lazily inside a scope land on the scope's device.

torchx.layers is a separate distribution; these tests skip when it lacks what they use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import torchx.devices as tx
import torchx.nn as nnx


def _layers_with(*names: str):  # type: ignore[no-untyped-def]
    layers = pytest.importorskip("torchx.layers", reason="torchx.layers is not importable here")
    missing = [name for name in names if not hasattr(layers, name)]
    if missing:
        pytest.skip(f"torchx.layers does not provide {missing} yet")
    return layers


def test_lazy_layer_is_built_on_the_scope_device() -> None:
    L = _layers_with("Linear")
    layer = L.Linear(20)
    with tx.device_scope(torch.device("meta")):
        y = layer(torch.zeros((16, 10)))
    assert (tuple(y.shape), y.device) == ((16, 20), torch.device("meta"))


def test_sequential_inside_a_torchx_module_built_in_the_scope() -> None:
    L = _layers_with("Sequential", "Linear", "ReLU")

    class Head(nnx.Module):
        def __init__(self) -> None:
            self.body = L.Sequential(L.Linear(8), L.ReLU(), L.Linear(2))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.body(x)  # type: ignore[no-any-return]

    with tx.device_scope(torch.device("meta")):
        model = Head()
        y = model(torch.zeros(3, 5))  # shapes inferred and weights made on meta
    assert (tuple(y.shape), y.device) == ((3, 2), torch.device("meta"))
    assert {p.device for p in model.parameters()} == {torch.device("meta")}


def test_built_layers_keep_their_weights_in_a_meta_scope() -> None:
    L = _layers_with("Sequential", "Linear")

    class Head(nnx.Module):
        def __init__(self) -> None:
            self.body = L.Sequential(L.Linear(2))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.body(x)  # type: ignore[no-any-return]

    model = Head()
    model(torch.zeros(3, 5))  # built on the CPU, with real weights
    weight = model.body[0].native_module().weight.detach().clone()
    with tx.device_scope(torch.device("meta")), pytest.raises(RuntimeError, match="holds real"):
        model(torch.zeros(3, 5))
    assert torch.equal(model.body[0].native_module().weight, weight)


def _net(L: Any) -> nnx.Module:
    """A torchx module whose layers are built by its first call."""

    class Net(nnx.Module):
        def __init__(self) -> None:
            self.body = L.Sequential(L.Linear(8), L.ReLU(), L.Linear(4))
            self.head = L.Linear(2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.body(x))  # type: ignore[no-any-return]

    return Net()


def test_freeze_before_the_build_holds_for_the_weights_it_makes() -> None:
    L = _layers_with("Sequential", "Linear", "ReLU")
    model = _net(L).freeze()
    model(torch.zeros(1, 3))
    assert model.num_params() == 3 * 8 + 8 + 8 * 4 + 4 + 4 * 2 + 2
    assert model.num_params(trainable_only=True) == 0
    thawed = _net(L).freeze().unfreeze()
    thawed(torch.zeros(1, 3))
    assert thawed.num_params(trainable_only=True) == thawed.num_params() > 0


def test_counting_or_copying_unbuilt_layers_says_to_build_first() -> None:
    L = _layers_with("Sequential", "Linear", "ReLU")
    built = _net(L)
    built(torch.zeros(1, 3))
    before = {k: v.clone() for k, v in built.state_dict().items()}
    calls: dict[str, Callable[[], object]] = {
        "num_params: submodule 'body'": lambda: _net(L).num_params(),
        "hard_update: other's submodule 'body'": lambda: built.hard_update(_net(L)),
        "soft_update: other's submodule 'body'": lambda: built.soft_update(_net(L), 0.5),
        "hard_update: submodule 'body'": lambda: _net(L).hard_update(built),
    }
    for start, call in calls.items():
        with pytest.raises(RuntimeError) as info:
            call()
        message = str(info.value)
        assert message.startswith(start), message
        assert "build the model first (call it once on an example input)" in message
        assert "_torchx" not in message and "\n" not in message
    after = built.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
