"""The functional API: placeholders, ops, structures, shared layers, sub-models."""

from __future__ import annotations

import threading

import pytest
import torch

import torchx.layers as L
from torchx.layers import Placeholder, ShapeError


def test_arithmetic_with_broadcasting_and_scalars() -> None:
    a = Placeholder((None, 3, 4))
    b = Placeholder((None, 1, 4))
    out = (a + b) * 2 - 1 / (b + 3) + (-a) / 2.0
    assert out.shape == (None, 3, 4)
    prod = a @ Placeholder((None, 4, 5))
    assert prod.shape == (None, 3, 5)
    model = L.Functional(inputs=[a, b], outputs=[out, 1 - a])
    x, y = torch.randn(2, 3, 4), torch.randn(2, 1, 4)
    got, other = model(x, y)
    assert torch.allclose(got, (x + y) * 2 - 1 / (y + 3) + (-x) / 2.0)
    assert torch.allclose(other, 1 - x)
    assert isinstance(model([x, y]), tuple)


def test_indexing_and_reshaping() -> None:
    x = Placeholder((None, 4, 6))
    first = x[:, 0]
    tail = x[..., 2:]
    assert first.shape == (None, 6)
    assert tail.shape == (None, 4, 4)
    flat = x.flatten()
    v = x.view(6, 4).transpose(1, 2)
    r = x.reshape(2, -1).permute(0, 2, 1)
    assert (flat.shape, v.shape, r.shape) == ((None, 24), (None, 4, 6), (None, 12, 2))
    joined = L.concat([x, tail], dim=-1)
    stacked = L.stack([x, x], dim=1)
    assert joined.shape == (None, 4, 10)
    assert stacked.shape == (None, 2, 4, 6)
    model = L.Functional(x, {"first": first, "parts": [flat, v, r], "j": joined, "s": stacked})
    t = torch.randn(3, 4, 6)
    out = model(t)
    assert torch.equal(out["first"], t[:, 0])
    assert torch.equal(out["parts"][1], t.view(3, 6, 4).transpose(1, 2))
    assert torch.equal(out["j"], torch.cat([t, t[..., 2:]], -1))
    assert out["s"].shape == (3, 2, 4, 6)


def test_ops_may_not_touch_the_batch_dimension() -> None:
    x = Placeholder((None, 4, 6))
    with pytest.raises(ShapeError, match="batch"):
        x[0]
    with pytest.raises(ShapeError, match="batch"):
        x.transpose(0, 1)
    with pytest.raises(TypeError, match="cannot be combined"):
        x + "a"  # type: ignore[operator]


def test_dict_and_nested_inputs() -> None:
    a = Placeholder((None, 5))
    b = Placeholder((None, 3))
    c = Placeholder((None, 2))
    out = L.Linear(4)(L.Concat()([a, b, c]))
    model = L.Functional(inputs={"a": a, "rest": [b, c]}, outputs=out)
    ta, tb, tc = torch.randn(2, 5), torch.randn(2, 3), torch.randn(2, 2)
    y = model({"a": ta, "rest": [tb, tc]})
    assert torch.equal(y, model(a=ta, rest=(tb, tc)))
    assert y.shape == (2, 4)
    with pytest.raises(TypeError, match="keys"):
        model({"a": ta})


def test_shared_layer_shares_weights() -> None:
    a = Placeholder((None, 6))
    b = Placeholder((None, 6))
    dense = L.Linear(3)
    model = L.Functional([a, b], L.Add()([dense(a), dense(b)]))
    assert len(list(model.parameters())) == 2
    x, y = torch.randn(2, 6), torch.randn(2, 6)
    assert torch.allclose(model(x, y), dense(x) + dense(y))
    assert model.code.count("self.linear(") == 2


def test_submodel_inside_functional() -> None:
    inner_in = Placeholder((None, 8))
    inner = L.Functional(inner_in, L.ReLU()(L.Linear(8)(inner_in)), name="block")
    x = Placeholder((None, 8))
    y = inner(inner(x))
    model = L.Functional(x, L.Linear(2)(y))
    assert {n for n, _ in model.named_children()} == {"block", "linear"}
    t = torch.randn(4, 8)
    assert torch.allclose(model(t), model.linear(inner(inner(t))))


def test_multi_output_layer_in_functional() -> None:
    x = Placeholder((None, 7, 3))
    seq, (h, c) = L.LSTM(5, return_sequences=True, return_state=True)(x)
    assert (seq.shape, h.shape, c.shape) == ((None, 7, 5), (1, None, 5), (1, None, 5))
    model = L.Functional(x, [seq[:, -1], h])
    last, hidden = model(torch.randn(2, 7, 3))
    assert torch.allclose(last, hidden[0])


def test_forward_is_reentrant_and_keeps_no_activations() -> None:
    x = Placeholder((None, 4))
    model = L.Functional(x, L.Linear(4)(x) * 2)
    results: dict[int, torch.Tensor] = {}

    def run(i: int) -> None:
        results[i] = model(torch.full((3, 4), float(i)))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, out in results.items():
        assert torch.allclose(out, model(torch.full((3, 4), float(i))))
    # placeholders hold only a shape and the call that made them
    assert Placeholder.__slots__ == ("node", "shape")


def test_all_parameters_exist_after_construction() -> None:
    x = Placeholder((None, 3, 8, 8))
    y = L.Conv2d(4, 3)(x)
    model = L.Functional(x, L.Linear(2)(y.flatten()))
    assert sum(p.numel() for p in model.parameters()) == (3 * 4 * 9 + 4) + (4 * 36 * 2 + 2)


def test_output_not_reachable_from_inputs_is_an_error() -> None:
    a = Placeholder((None, 3))
    b = Placeholder((None, 3))
    with pytest.raises(ValueError, match="not listed in inputs"):
        L.Functional(a, a + b)


def test_named_layers_and_name_clashes() -> None:
    x = Placeholder((None, 3))
    y = L.Linear(2, name="head")(x)
    assert hasattr(L.Functional(x, y), "head")
    z = L.Linear(2, name="head")(y)
    with pytest.raises(ValueError, match="both named 'head'"):
        L.Functional(x, z)
    with pytest.raises(ValueError, match="clashes"):
        L.Functional(x, L.Linear(2, name="forward")(x))
    with pytest.raises(ValueError, match="identifier"):
        L.Linear(2, name="not a name")
