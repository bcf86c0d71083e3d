"""An L.Sequential edited while it sits inside another built layer: an edit that keeps its
output shape is taken; one that changes it is refused (the outer layer was built for the
shape it had), with the inner chain left as it was."""

from __future__ import annotations

import copy
import gc
from collections.abc import Callable

import pytest
import torch
from torch import nn

import torchx.layers as L
from torchx.layers import ShapeError


def _in_sequential(inner: L.Sequential) -> tuple[L.Layer, torch.Tensor]:
    outer = L.Sequential(inner, L.Linear(4))
    x = torch.randn(4, 8)
    outer(x)
    return outer, x


def _in_functional(inner: L.Sequential) -> tuple[L.Layer, torch.Tensor]:
    p = L.Placeholder((None, 8))
    return L.Functional(inputs=p, outputs=L.Linear(4)(inner(p))), torch.randn(4, 8)


def _in_time_distributed(inner: L.Sequential) -> tuple[L.Layer, torch.Tensor]:
    outer = L.Sequential(L.TimeDistributed(inner), L.Flatten(), L.Linear(4))
    x = torch.randn(4, 3, 8)
    outer(x)
    return outer, x


HOLDERS: list[Callable[[L.Sequential], tuple[L.Layer, torch.Tensor]]] = [
    _in_sequential,
    _in_functional,
    _in_time_distributed,
]


@pytest.mark.parametrize("hold", HOLDERS, ids=lambda f: f.__name__)
def test_an_edit_changing_a_held_chain_output_is_refused_and_undone(
    hold: Callable[[L.Sequential], tuple[L.Layer, torch.Tensor]],
) -> None:
    torch.manual_seed(0)
    inner = L.Sequential(L.Linear(16))
    outer, x = hold(inner)
    before = outer(x)
    new = L.Linear(3)
    with pytest.raises(ShapeError, match=r"output \(\w+, 3\) instead of \(\w+, 16\)") as e:
        inner.append(new)
    assert "Sequential" in e.value.path and "sits inside the built" in str(e.value)
    assert len(inner) == 1 and list(dict(inner.named_children())) == ["0"]
    assert not new.built  # the refused layer can still go elsewhere
    assert torch.equal(outer(x), before)
    # an edit that keeps the output shape is taken, and the outer model runs it
    inner.append(nn.Tanh())
    after = outer(x)
    assert after.shape == before.shape and not torch.equal(after, before)


def test_the_refusal_ends_with_the_outer_model() -> None:
    inner = L.Sequential(L.Linear(16))
    outer, x = _in_sequential(inner)
    with pytest.raises(ShapeError, match="sits inside the built"):
        inner.append(L.Linear(3))
    del outer
    gc.collect()
    inner.append(L.Linear(3))  # nothing holds it now
    assert inner(x).shape == (4, 3)


def test_a_chain_taken_out_of_its_outer_model_can_change() -> None:
    inner = L.Sequential(L.Linear(16))
    outer = L.Sequential(L.Linear(8), inner)
    x = torch.randn(4, 8)
    outer(x)
    outer.pop()
    inner.append(L.Linear(3))
    assert inner(torch.randn(4, 8)).shape == (4, 3)


def test_a_deep_copy_of_the_outer_model_protects_its_copy_of_the_chain() -> None:
    inner = L.Sequential(L.Linear(16))
    outer, x = _in_sequential(inner)
    twin = copy.deepcopy(outer)
    twin_inner = twin[0]
    assert isinstance(twin_inner, L.Sequential) and twin_inner is not inner
    with pytest.raises(ShapeError, match="sits inside the built"):
        twin_inner.append(L.Linear(3))
    assert twin(x).shape == (4, 4)
    # a copy of the chain alone sits in nothing
    alone = copy.deepcopy(inner)
    alone.append(L.Linear(3))
    assert alone(x).shape == (4, 3)
