"""An L.Sequential changed after it was made (nn.Sequential's append, insert, extend, pop,
item assignment and deletion, or a module registered under a new name) runs its chain in
the new order, as an nn.Sequential holding the same modules would."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torchx.layers as L
from torchx.layers import ShapeError


def _built() -> tuple[L.Sequential, torch.Tensor]:
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    model = L.Sequential(L.Linear(16), nn.ReLU())
    model(x)
    return model, x


def _plain(model: L.Sequential) -> nn.Sequential:
    """An nn.Sequential of the modules the model now holds, in its order."""
    return nn.Sequential(*(m.native_module() if isinstance(m, L.Layer) else m for m in model))


def test_append_insert_extend_on_a_built_model_run_in_order_and_keep_weights() -> None:
    model, x = _built()
    weight = model[0].weight.detach().clone()
    model.append(L.Linear(3))
    model.insert(1, nn.Tanh())
    model.extend([nn.Sigmoid(), L.Linear(2)])
    assert [type(m).__name__ for m in model] == [
        "Linear",
        "Tanh",
        "ReLU",
        "Linear",
        "Sigmoid",
        "Linear",
    ]
    assert list(dict(model.named_children())) == ["0", "1", "2", "3", "4", "5"]
    # the layers added to a built model have their weights at once
    assert len(list(model.parameters())) == 6
    assert torch.equal(model[0].weight, weight)
    assert torch.equal(model(x), _plain(model)(x))
    assert model(x).shape == (4, 2)


def test_item_assignment_deletion_and_pop() -> None:
    model, x = _built()
    model.append(L.Linear(3))
    model[1] = nn.Tanh()
    assert torch.equal(
        model(x), torch.tanh(model[0].native_module()(x)) @ model[2].weight.T + model[2].bias
    )
    del model[1]
    assert [type(m).__name__ for m in model] == ["Linear", "Linear"]
    popped = model.pop()
    assert isinstance(popped, L.Linear) and len(model) == 1
    assert torch.equal(model(x), model[0].native_module()(x))


def test_a_module_registered_under_a_new_name_runs_last_as_in_nn_sequential() -> None:
    model, x = _built()
    model.register_module("head", nn.Linear(16, 2))
    model.tail = L.Linear(5)  # setattr registers it too, as on any nn.Module
    assert list(dict(model.named_children())) == ["0", "1", "head", "tail"]
    assert model(x).shape == (4, 5)
    assert "tail.weight" in model.state_dict()
    del model.tail
    assert model(x).shape == (4, 2)


def test_a_model_changed_before_its_build_infers_the_new_chain() -> None:
    model = L.Sequential(L.Linear(4))
    model.append(L.Linear(2))
    model.insert(0, L.Linear(6))
    x = torch.randn(3, 5)
    assert model(x).shape == (3, 2)
    assert [m.input_shapes[0][1] for m in model] == [5, 6, 4]


def test_a_module_that_does_not_fit_is_refused_and_the_model_left_as_it_was() -> None:
    model, x = _built()
    before = model(x)
    with pytest.raises(ShapeError) as e:
        model.append(nn.Linear(5, 2))
    assert "Sequential.2" in str(e.value)
    assert len(model) == 2 and list(dict(model.named_children())) == ["0", "1"]
    assert torch.equal(model(x), before)
    with pytest.raises(TypeError, match="Sequential item 2 is a str"):
        model.append("relu")  # type: ignore[arg-type]
    assert len(model) == 2


def test_a_change_the_kept_layers_do_not_fit_is_named_as_the_change() -> None:
    x = torch.randn(2, 3)
    model = L.Sequential(L.Linear(8), L.ReLU(), L.Linear(4))
    before = model(x)
    edits = {
        1: lambda: model.__setitem__(0, L.Linear(5)),  # the weightless ReLU gets 5, not 8
        2: lambda: model.insert(1, L.Linear(6)),  # ReLU, now item 2, gets 6
    }
    for index, edit in edits.items():
        with pytest.raises(ShapeError) as e:
            edit()
        message = str(e.value)
        assert message.startswith(
            f"layer 'Sequential': after this change item {index} (ReLU), kept as it was built, "
            "gets input (batch, "
        ), message
        assert "but was built for (batch, 8); hint: give the changed layer an output of " in message
        assert "fixed weights" not in message
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear"]
    assert torch.equal(model(x), before)


def test_edits_name_modules_as_nn_sequential_does() -> None:
    model, x = _built()
    plain = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
    for m in (model, plain):
        m.register_module("head", nn.Tanh())
        m.append(nn.Identity())  # "3": a module registered under a name keeps it
        m[2] = nn.Sigmoid()  # the position keeps its name
        m.extend([nn.ReLU()])
    assert list(dict(model.named_children())) == ["0", "1", "head", "3", "4"]
    assert list(dict(model.named_children())) == list(dict(plain.named_children()))
    for m in (model, plain):
        del m[1]  # nn.Sequential numbers every position again after a deletion
        m.pop(0)
    assert list(dict(model.named_children())) == ["0", "1", "2"]
    assert list(dict(model.named_children())) == list(dict(plain.named_children()))
    assert [type(m) for m in model] == [type(m) for m in plain]
    for m in (model, plain):
        m.insert(1, nn.Tanh())
        m.insert(-3, nn.ReLU())
        m.insert(len(m), nn.Identity())
    assert list(dict(model.named_children())) == list(dict(plain.named_children()))
    assert [type(m) for m in model] == [type(m) for m in plain]
    assert model(x).shape == plain(x).shape == (4, 8)


def test_a_checkpoint_saved_before_an_append_loads_after_it() -> None:
    model, x = _built()
    model.register_module("head", nn.Linear(16, 2))
    saved = model.state_dict()
    model.append(nn.Softmax(dim=1))
    assert list(model.state_dict()) == list(saved)
    model.load_state_dict(saved)  # strict: every key found under its old name
    assert model(x).shape == (4, 2)


@pytest.mark.parametrize("index", [3, 100, -4, -100])
def test_insert_out_of_range_raises_index_error_as_nn_sequential_does(index: int) -> None:
    model, x = _built()
    with pytest.raises(IndexError):
        nn.Sequential(nn.Linear(8, 16), nn.ReLU()).insert(index, nn.Tanh())
    with pytest.raises(IndexError, match=f"index {index} is out of range for 2 items"):
        model.insert(index, nn.Tanh())
    assert [type(m) for m in model] == [L.Linear, nn.ReLU]
    assert model(x).shape == (4, 16)


def _names(m: nn.Module) -> list[str]:
    return list(dict(m.named_children()))


def test_a_slice_and_pop_of_a_slice_give_a_sequential_as_nn_sequential_does() -> None:
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    model = L.Sequential(L.Linear(16), nn.ReLU(), L.Linear(4), nn.Tanh())
    model(x)
    plain = _plain(model)
    for m in (model, plain):
        m.register_module("head", nn.Sigmoid())
    for index in (slice(1, 3), slice(2, None), slice(None, None, 2), slice(-2, None)):
        part, plain_part = model[index], plain[index]
        assert isinstance(part, L.Sequential)
        assert _names(part) == _names(plain_part)
    middle = model[1:3]  # built for what item 1 was given: the shared weights, same keys
    assert list(middle.state_dict()) == list(plain[1:3].state_dict()) == ["2.weight", "2.bias"]
    torch.testing.assert_close(middle(model[0](x)), model[2](model[1](model[0](x))))
    assert middle[1] is model[2]
    taken, plain_taken = model.pop(slice(1, 3)), plain.pop(slice(1, 3))
    assert isinstance(taken, L.Sequential)
    assert _names(taken) == _names(plain_taken) == ["1", "2"]
    assert _names(model) == _names(plain) == ["0", "1", "2"]
    assert [type(m).__name__ for m in model] == [type(m).__name__ for m in plain]
    assert model(x).shape == (4, 16)
    torch.testing.assert_close(model(x), plain(x))
