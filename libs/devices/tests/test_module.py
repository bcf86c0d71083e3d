"""torchx.nn.Module: self-placement on the scope's device and the training helpers."""

from __future__ import annotations

import copy
import io
import math
from typing import Any

import pytest
import torch
from torch import nn

import torchx.devices as tx
import torchx.nn as nnx

META = torch.device("meta")
CPU = torch.device("cpu")


class TwoLayers(nnx.Module):
    """The seed's model: note that it never calls super().__init__()."""

    def __init__(self) -> None:
        self.fc1 = nn.Linear(10, 20)
        self.fc2 = nn.Linear(20, 30)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.fc1(x))  # type: ignore[no-any-return]


class CountsMoves(TwoLayers):
    """Counts how often the module is moved with ``.to()``, which is how a scope moves it."""

    def __init__(self) -> None:
        super().__init__()
        self.moves = 0

    def to(self, *args: Any, **kwargs: Any) -> Any:
        self.moves += 1
        return super().to(*args, **kwargs)


class WithNorm(nnx.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.norm = nn.BatchNorm1d(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.fc(x))  # type: ignore[no-any-return]


def _devices(module: nn.Module) -> set[torch.device]:
    return {t.device for t in [*module.parameters(), *module.buffers()]}


def test_subclass_without_super_init_works_as_nn_module() -> None:
    model = TwoLayers()
    assert isinstance(model, nn.Module)
    assert [name for name, _ in model.named_children()] == ["fc1", "fc2"]
    assert model(torch.zeros(4, 10)).shape == (4, 30)
    assert set(model.state_dict()) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}


def test_calling_super_init_late_keeps_what_was_assigned() -> None:
    class Late(nnx.Module):
        def __init__(self) -> None:
            self.fc = nn.Linear(2, 2)
            super().__init__()

    assert [name for name, _ in Late().named_children()] == ["fc"]


def test_a_model_built_in_a_scope_lives_and_runs_there() -> None:
    with tx.device_scope(META):
        x = torch.zeros((4, 10))
        built_inside = TwoLayers()  # factories in the scope build it on the device directly
        assert _devices(built_inside) == {META}
        y = built_inside(x)
    assert (y.shape, y.device) == ((4, 30), META)


def test_a_meta_scope_never_takes_real_weights() -> None:
    # .to("meta") keeps shapes and drops values; a scope must not do that to a model
    # it did not make: the call is refused and the weights stay as they were
    cpu_model = TwoLayers()
    before = {k: v.clone() for k, v in cpu_model.state_dict().items()}
    with tx.device_scope(META), pytest.raises(RuntimeError, match=r"device_scope\('meta'\)"):
        cpu_model(torch.zeros((4, 10)))
    after = cpu_model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert cpu_model(torch.zeros((4, 10))).shape == (4, 30)  # still usable on the CPU


def test_outside_every_scope_the_model_stays_put() -> None:
    model = CountsMoves()
    model(torch.zeros(1, 10))
    assert model.moves == 0
    assert _devices(model) == {CPU}


def test_already_placed_model_is_not_moved_again() -> None:
    model = CountsMoves()
    with tx.device_scope("cpu"):
        for _ in range(3):
            model(torch.zeros(1, 10))
    with tx.device_scope(CPU):  # another scope, equal device
        model(torch.zeros(1, 10))
    assert model.moves == 0
    with tx.device_scope(META):
        on_meta = CountsMoves()  # made on meta: nothing to move
        on_meta(torch.zeros(1, 10))
        on_meta(torch.zeros(1, 10))
    assert on_meta.moves == 0
    assert _devices(on_meta) == {META}


def test_moving_by_hand_is_noticed() -> None:
    with tx.device_scope(META):
        model = CountsMoves()
        model(torch.zeros(1, 10))  # placed on meta (it was made there)
    model.to_empty(device=CPU)  # leaves the meta device by hand
    assert _devices(model) == {CPU}
    # the placement cached by the first call is forgotten: the real tensors are seen
    with tx.device_scope(META), pytest.raises(RuntimeError, match="holds real"):
        model(torch.zeros(1, 10))
    assert _devices(model) == {CPU}


def test_a_parent_that_is_a_torchx_module_moves_its_children_knowingly() -> None:
    class Outer(nnx.Module):
        def __init__(self) -> None:
            self.inner = CountsMoves()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.inner(x)  # type: ignore[no-any-return]

    with tx.device_scope(META):
        model = Outer()
        model(torch.zeros(1, 10))
    model.to_empty(device=CPU)  # the inner module's cached placement goes too
    with (
        tx.device_scope(META),
        pytest.raises(RuntimeError, match=r"CountsMoves was called.*holds real"),
    ):
        model.inner(torch.zeros(1, 10))


def test_leaving_meta_through_a_plain_parent_loses_nothing() -> None:
    with tx.device_scope(META):
        model = CountsMoves()
        model(torch.zeros(1, 10))
    nn.Sequential(model).to_empty(device=CPU)  # new parameters, made without model.to()
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(0.5)  # to_empty leaves whatever was in memory, NaN included
    weights = {n: t.clone() for n, t in model.state_dict().items()}
    with tx.device_scope(META), pytest.raises(RuntimeError, match="device"):
        model(torch.zeros(1, 10))  # torch names the mismatch; the scope moved nothing
    assert model.moves == 0
    assert all(torch.equal(weights[n], t) for n, t in model.state_dict().items())


def test_a_layer_added_after_placement_is_looked_at_again() -> None:
    with tx.device_scope(META):
        model = TwoLayers()
        model(torch.zeros(1, 10))
    model.fc2 = nn.Linear(20, 30)  # made on the CPU, outside the scope
    with tx.device_scope(META), pytest.raises(RuntimeError, match=r"holds real.*fc2\.weight"):
        model(torch.zeros(1, 10))
    model.fc2 = nn.Linear(20, 30, device=META)
    model.register_buffer("scale", torch.ones(1))
    with tx.device_scope(META), pytest.raises(RuntimeError, match="buffer:scale"):
        model(torch.zeros(1, 10))


def test_nested_torchx_modules_all_follow() -> None:
    class Outer(nnx.Module):
        def __init__(self) -> None:
            self.inner = TwoLayers()
            self.head = nn.Linear(30, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.inner(x))  # type: ignore[no-any-return]

    with tx.device_scope(META):
        model = Outer()
        assert model(torch.zeros(2, 10)).device == META
    assert _devices(model) == {META}
    assert model.inner._torchx_placed_on == META  # the inner module is marked placed too


def test_deepcopy_pickle_and_state_dict_are_standard() -> None:
    model = WithNorm()
    twin = copy.deepcopy(model)
    assert isinstance(twin, WithNorm)
    assert torch.equal(twin.fc.weight, model.fc.weight)
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    assert torch.equal(loaded.fc.weight, model.fc.weight)
    fresh = WithNorm()
    fresh.load_state_dict(model.state_dict())
    assert torch.equal(fresh.fc.bias, model.fc.bias)


# helpers


def _with_grads() -> TwoLayers:
    torch.manual_seed(0)
    model = TwoLayers()
    (model(torch.randn(8, 10)) * 100).sum().backward()
    return model


def test_clip_grad_value() -> None:
    model = _with_grads()
    model.clip_grad_value(0.01)
    grads = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    assert grads.abs().max().item() == pytest.approx(0.01)


def test_clip_grad_norm_returns_the_norm_before_clipping() -> None:
    model = _with_grads()
    before = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    expected = before.norm().item()
    assert expected > 1.0
    norm = model.clip_grad_norm(1.0)
    assert isinstance(norm, float)
    assert norm == pytest.approx(expected, rel=1e-5)
    after = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    assert after.norm().item() == pytest.approx(1.0, rel=1e-4)
    assert model.clip_grad_norm(1.0, norm_type=math.inf) <= 1.0 + 1e-6


@pytest.mark.parametrize("bad", [0, -1.0, "1", True, None])
def test_clip_helpers_reject_bad_limits(bad: object) -> None:
    model = _with_grads()
    with pytest.raises(ValueError, match=r"clip_value=.* accepted: a number > 0"):
        model.clip_grad_value(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"max_norm=.* accepted: a number > 0"):
        model.clip_grad_norm(bad)  # type: ignore[arg-type]


def test_soft_update_mixes_parameters_and_buffers() -> None:
    target, online = WithNorm(), WithNorm()
    online.norm.running_mean.fill_(2.0)
    online.norm.num_batches_tracked.fill_(7)
    expected_w = 0.75 * target.fc.weight.detach() + 0.25 * online.fc.weight.detach()
    target.soft_update(online, 0.25)
    assert torch.allclose(target.fc.weight, expected_w)
    assert torch.allclose(target.norm.running_mean, torch.full((3,), 0.5))
    assert target.norm.num_batches_tracked.item() == 7
    assert not target.fc.weight.requires_grad or target.fc.weight.grad is None


def test_soft_update_with_tau_one_equals_hard_update() -> None:
    a, b = WithNorm(), WithNorm()
    a.soft_update(b, 1.0)
    theirs = b.state_dict()
    assert all(torch.equal(value, theirs[key]) for key, value in a.state_dict().items())


def test_hard_update_copies_parameters_and_buffers() -> None:
    target, source = WithNorm(), WithNorm()
    source.norm.running_var.fill_(3.0)
    target.hard_update(source)
    for key, value in source.state_dict().items():
        assert torch.equal(target.state_dict()[key], value), key


def test_updates_reject_a_different_architecture_and_write_nothing() -> None:
    target = WithNorm()
    before = {k: v.clone() for k, v in target.state_dict().items()}
    with pytest.raises(ValueError, match=r"other lacks \['buffer:norm.num_batches_tracked'"):
        target.hard_update(_OtherNorm())
    with pytest.raises(ValueError, match=r"other.fc.weight has shape \(3, 4\)"):
        target.soft_update(_WideInput(), 0.5)
    with pytest.raises(TypeError, match=r"other=3 is not a torch\.nn\.Module"):
        target.hard_update(3)  # type: ignore[arg-type]
    for key, value in target.state_dict().items():
        assert torch.equal(value, before[key]), key


class _OtherNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.norm = nn.LayerNorm(3)


class _WideInput(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.norm = nn.BatchNorm1d(3)


@pytest.mark.parametrize("bad", [-0.1, 1.5, "0.5", None])
def test_soft_update_rejects_bad_tau(bad: object) -> None:
    with pytest.raises(ValueError, match=r"tau=.* accepted: a number in \[0, 1\]"):
        WithNorm().soft_update(WithNorm(), bad)  # type: ignore[arg-type]


def test_freeze_unfreeze_and_num_params() -> None:
    model = TwoLayers()
    assert model.num_params() == 10 * 20 + 20 + 20 * 30 + 30
    assert model.freeze() is model
    assert not any(p.requires_grad for p in model.parameters())
    assert model.num_params(trainable_only=True) == 0
    model.unfreeze()
    model.fc1.requires_grad_(False)
    assert model.num_params(trainable_only=True) == 20 * 30 + 30
    assert model.unfreeze().num_params(trainable_only=True) == model.num_params()


def test_lazy_modules_are_counted_only_once_made() -> None:
    class Lazy(nnx.Module):
        def __init__(self) -> None:
            self.seq = nn.Sequential(nn.LazyLinear(4))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.seq(x)  # type: ignore[no-any-return]

    with pytest.raises(RuntimeError, match=r"^num_params: submodule 'seq.0' \(LazyLinear\)"):
        Lazy().num_params()
    made = Lazy()
    made(torch.zeros(1, 3))
    assert made.num_params() == 3 * 4 + 4
    with pytest.raises(RuntimeError, match=r"other's submodule 'seq\.0'.*build the model first"):
        made.hard_update(Lazy())
