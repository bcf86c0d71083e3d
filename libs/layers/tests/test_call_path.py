"""What a call of a built model or layer runs: the modules it holds at that call, with
every hook and override a torch user relies on."""

from __future__ import annotations

import copy
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

import torchx.layers as L
from torchx.layers import ShapeError


def _zero_linear(fan_in: int, fan_out: int) -> nn.Linear:
    module = nn.Linear(fan_in, fan_out)
    nn.init.zeros_(module.weight)
    nn.init.zeros_(module.bias)
    return module


def test_a_functional_forward_frees_each_intermediate_after_its_last_use() -> None:
    x = L.Placeholder((None, 4))
    first, last = L.Linear(4, name="first"), L.Linear(4, name="last")
    model = L.Functional(x, last(L.ReLU()(first(x))))
    made: list[weakref.ref[torch.Tensor]] = []
    alive: list[bool] = []
    first.register_forward_hook(lambda m, args, out: made.append(weakref.ref(out)))
    last.register_forward_pre_hook(lambda m, args: alive.append(made[-1]() is not None))
    with torch.no_grad():
        model(torch.randn(2, 4))
    # the output of `first` was read by the ReLU only: by the time `last` runs it is gone
    assert alive == [False]
    assert "del v0" in model.code


def test_a_module_replaced_in_a_functional_model_is_the_one_called() -> None:
    x = L.Placeholder((None, 4))
    model = L.Functional(x, L.ReLU()(L.Linear(3, name="dense")(x)))
    t = torch.randn(2, 4)
    model(t)
    model.dense = _zero_linear(4, 3)  # as one would swap a submodule
    assert torch.equal(model(t), torch.zeros(2, 3))


def test_a_module_registered_in_place_of_a_built_one_is_the_one_called() -> None:
    # torch helpers that swap modules (fusion, quantization) register the new one under
    # the old name after the model has run: the next call must run the new module
    x = L.Placeholder((None, 4))
    model = L.Functional(x, L.Linear(3, name="dense")(x))
    layer = L.Linear(3)
    t = torch.randn(2, 4)
    model(t), layer(t)
    model.register_module("dense", _zero_linear(4, 3))
    layer.register_module("native", _zero_linear(4, 3))
    assert torch.equal(model(t), torch.zeros(2, 3))
    assert torch.equal(layer(t), torch.zeros(2, 3))


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
def test_a_sequential_runs_the_modules_quantization_convert_swapped_in() -> None:
    # convert(inplace=True) puts each quantized module in its float module's place by
    # writing the parent's registry of submodules itself, not through setattr or
    # register_module: the next call must still run the quantized modules, as
    # nn.Sequential and a Functional model do
    quantization = pytest.importorskip("torch.ao.quantization")
    mappings = pytest.importorskip("torch.ao.quantization.quantization_mappings")
    torch.manual_seed(0)
    model = L.Sequential(L.Linear(8), L.ReLU(), L.Linear(4))
    x = torch.randn(3, 5)
    model(x)
    quantization.propagate_qconfig_(model, {nn.Linear: quantization.default_dynamic_qconfig})
    model(x)
    quantization.convert(
        model,
        mapping=mappings.get_default_dynamic_quant_module_mappings(),
        inplace=True,
        remove_qconfig=False,  # nothing on the Sequential itself is set or deleted
    )
    swapped = [model.get_submodule(name) for name in ("0", "2")]
    assert all(type(m).__module__.startswith("torch.ao.nn.quantized") for m in swapped)
    ran: list[nn.Module] = []
    for m in swapped:
        m.register_forward_hook(lambda m, args, out: ran.append(m))
    y = model(x)
    assert ran == swapped
    assert torch.equal(y, nn.Sequential(*model.children())(x))
    # indexing answers what runs, as nn.Sequential's does; an untouched layer stays itself
    assert [model[0], model[-1]] == swapped
    assert isinstance(model[1], L.ReLU)


def test_a_sequential_indexed_before_and_after_building_gives_its_layers() -> None:
    first, second = L.Linear(4), L.Linear(2)
    model = L.Sequential(first, second)
    assert model[0] is first and model[-1] is second
    model(torch.randn(3, 5))
    assert model[0] is first and model[1] is second
    assert model[0].weight.shape == (4, 5)


def test_a_layer_subclass_forward_runs_in_every_call() -> None:
    class Silenced(L.Linear):
        def forward(self, *inputs: Any, **kwargs: Any) -> Any:
            return super().forward(*inputs, **kwargs) * 0

    layer = Silenced(3)
    t = torch.randn(2, 4)
    for _ in range(3):
        assert torch.equal(layer(t), torch.zeros(2, 3))


def test_global_module_hooks_see_a_layer_in_every_call() -> None:
    layer = L.Linear(3)
    seen: list[str] = []
    hook = torch.nn.modules.module.register_module_forward_hook(
        lambda m, args, out: seen.append(type(m).__name__)
    )
    try:
        layer(torch.randn(2, 4))
        first = list(seen)
        seen.clear()
        layer(torch.randn(2, 4))
    finally:
        hook.remove()
    assert seen == first and "Linear" in seen and len(seen) == 2  # the layer and its module


def test_a_built_layer_called_on_its_own_fires_its_hooks() -> None:
    layer = L.Linear(3)
    x = torch.randn(2, 4)
    layer(x)
    shapes: list[tuple[int, ...]] = []
    handle = layer.register_forward_hook(lambda m, args, out: shapes.append(tuple(out.shape)))
    layer(x)
    layer(torch.randn(5, 4))
    handle.remove()
    layer(x)
    assert shapes == [(2, 3), (5, 3)]


def test_a_built_layer_calls_the_module_it_holds_now() -> None:
    layer = L.Linear(3)
    x = torch.randn(2, 4)
    layer(x)
    layer.native = _zero_linear(4, 3)
    assert torch.equal(layer(x), torch.zeros(2, 3))


def test_a_forward_set_on_a_built_layer_runs() -> None:
    layer = L.ReLU()
    x = torch.randn(2, 4)
    layer(x)

    def negated(t: torch.Tensor) -> Any:
        return -t

    layer.forward = negated  # type: ignore[method-assign]  # as libraries that wrap forward do
    assert torch.equal(layer(x), -x)


def test_a_copy_of_a_called_layer_calls_its_own_module() -> None:
    layer = L.Linear(3)
    x = torch.randn(2, 4)
    before = layer(x)
    twin = copy.deepcopy(layer)
    with torch.no_grad():
        twin.native_module().weight.zero_()
        twin.native_module().bias.zero_()
    assert torch.equal(twin(x), torch.zeros(2, 3))
    assert torch.equal(layer(x), before)


class _OwnModule(nn.Module):
    """A hand-written module whose parts are torchx layers, each called on its own."""

    def __init__(self) -> None:
        super().__init__()
        self.first, self.act, self.last = L.Linear(4), L.ReLU(), L.Linear(2)

    def forward(self, x: torch.Tensor) -> Any:
        return self.last(self.act(self.first(x)))


@pytest.mark.slow
def test_layers_called_on_their_own_compile_without_graph_breaks() -> None:
    torch.compiler.reset()
    model = _OwnModule()
    x = torch.randn(3, 5)
    model(x)  # builds the layers; the next calls go straight to their modules
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    assert torch.allclose(compiled(x), model(x), atol=1e-6)
    exported = torch.export.export(model, (x,))
    assert torch.allclose(exported.module()(x), model(x), atol=1e-6)


def _first_calls_at_once(make: Callable[[], nn.Module], x: torch.Tensor) -> list[str]:
    """Six threads make the first call of a new model together, thirty times over; what
    went wrong."""
    errors: list[str] = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # hand the GIL over often, as a loaded machine does
    try:
        for _ in range(30):
            model = make()
            barrier = threading.Barrier(6)
            outputs: list[torch.Tensor] = []

            def call(model: nn.Module, barrier: threading.Barrier, got: list[torch.Tensor]) -> None:
                barrier.wait()
                try:
                    got.append(model(x))
                except Exception as e:
                    errors.append(repr(e))

            args = (model, barrier, outputs)
            threads = [threading.Thread(target=call, args=args) for _ in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if not all(torch.equal(out, outputs[0]) for out in outputs):
                errors.append("the threads ran different weights: the model was built twice")
    finally:
        sys.setswitchinterval(switch)
    return errors


@pytest.mark.parametrize(
    "make",
    [
        lambda: L.Sequential(L.Conv2d(8, 3), L.ReLU(), L.Flatten(), L.Linear(10)),
        lambda: L.Sequential(L.Sequential(L.Conv2d(4, 3), L.BatchNorm2d()), L.Flatten()),
        lambda: L.Conv2d(8, 3),
    ],
)
def test_first_calls_from_several_threads_all_run_the_built_model(
    make: Callable[[], nn.Module],
) -> None:
    # the build marked the model built before it had made its modules: other threads'
    # calls ran layers still unbuilt ("RuntimeError: Conv2d is not built yet")
    assert _first_calls_at_once(make, torch.zeros(2, 3, 16, 16)) == []


def test_a_rearranged_model_builds_again_at_its_next_call() -> None:
    model = L.Sequential(L.Linear(4), L.ReLU())
    model(torch.zeros(2, 3))
    model.append(L.Linear(5))
    assert model(torch.zeros(2, 3)).shape == (2, 5)
    model.insert(0, L.Tanh())
    assert model(torch.zeros(2, 3)).shape == (2, 5)
    with pytest.raises(ShapeError):
        model(torch.zeros(2, 7))
