"""A built model is plain PyTorch: deepcopy, torch.export, torch.compile, DDP."""

from __future__ import annotations

import copy
import shutil
import socket
from pathlib import Path

import pytest
import torch
from torch import nn

import torchx.layers as L


def _cnn() -> L.Sequential:
    model = L.Sequential(
        L.Conv2d(4, 3, padding=1), L.BatchNorm2d(), L.ReLU(), L.Flatten(), L.Linear(3)
    )
    model.build((None, 2, 6, 6))
    return model.eval()


def _residual() -> L.Functional:
    x = L.Placeholder((None, 2, 6, 6))
    h = L.ReLU()(L.Conv2d(2, 3, padding=1)(x))
    y = (h + x).flatten()
    return L.Functional(x, L.Linear(3)(y)).eval()


@pytest.mark.parametrize("make", [_cnn, _residual])
def test_deepcopy_is_independent(make: type) -> None:
    model = make()
    twin = copy.deepcopy(model)
    x = torch.randn(2, 2, 6, 6)
    assert torch.equal(model(x), twin(x))
    with torch.no_grad():
        for p in twin.parameters():
            p.add_(1.0)
    assert not torch.equal(model(x), twin(x))
    assert {id(p) for p in model.parameters()}.isdisjoint({id(p) for p in twin.parameters()})


def _reshaping() -> L.Functional:
    # reshape and concat run as functions made from each op's parameters
    x = L.Placeholder((None, 2, 6, 6))
    y = L.concat([L.Conv2d(2, 3, padding=1)(x), x], 1).reshape((4, 36))[:, 1:]
    return L.Functional(x, L.Linear(3)(y.flatten())).eval()


@pytest.mark.parametrize("make", [_cnn, _residual, _reshaping])
def test_a_whole_model_saved_with_torch_save_loads(make: type, tmp_path: Path) -> None:
    # a Functional's generated forward could not be pickled ("Can't pickle <function
    # forward>"); it is made again from its code when the model is loaded
    model = make()
    torch.save(model, tmp_path / "model.pt")
    again = torch.load(tmp_path / "model.pt", weights_only=False)
    x = torch.randn(2, 2, 6, 6)
    assert torch.equal(again(x), model(x))


@pytest.mark.parametrize("make", [_cnn, _residual])
def test_torch_export(make: type) -> None:
    model = make()
    x = torch.randn(2, 2, 6, 6)
    exported = torch.export.export(model, (x,))
    assert torch.allclose(exported.module()(x), model(x), atol=1e-6)


@pytest.mark.slow
def test_torch_compile_without_graph_breaks() -> None:
    # aot_eager traces the whole forward through dynamo and autograd without a C++ toolchain
    torch.compiler.reset()
    model = _residual()
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    x = torch.randn(2, 2, 6, 6)
    assert torch.allclose(compiled(x), model(x), atol=1e-6)


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("g++") is None and shutil.which("c++") is None,
    reason="the inductor backend compiles C++ on CPU and no C++ compiler is installed",
)
def test_torch_compile_with_the_default_inductor_backend() -> None:
    torch.compiler.reset()
    model = _residual()
    compiled = torch.compile(model, fullgraph=True)
    x = torch.randn(2, 2, 6, 6)
    with torch.no_grad():
        assert torch.allclose(compiled(x), model(x), atol=1e-5)


def test_state_dict_matches_a_hand_written_module() -> None:
    model = _cnn()
    hand = nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(144, 3)
    )
    assert list(hand.state_dict()) == list(model.state_dict())
    hand.load_state_dict(model.state_dict())
    hand.eval()
    x = torch.randn(2, 2, 6, 6)
    assert torch.equal(hand(x), model(x))


def _seed_cnn_layers() -> list[L.Layer]:
    return [
        L.Conv2d(20, kernel_size=5, stride=2, padding=1), L.ReLU(),
        L.Conv2d(30, kernel_size=7), L.BatchNorm2d(), L.ReLU(),
        L.Conv2d(40, kernel_size=3), L.BatchNorm2d(), L.ReLU(),
        L.Flatten(), L.Linear(80), L.ReLU(), L.Linear(10),
    ]  # fmt: skip


def _seed_cnn_by_hand() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(3, 20, kernel_size=5, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(20, 30, kernel_size=7), nn.BatchNorm2d(30), nn.ReLU(),
        nn.Conv2d(30, 40, kernel_size=3), nn.BatchNorm2d(40), nn.ReLU(),
        nn.Flatten(), nn.Linear(1960, 80), nn.ReLU(), nn.Linear(80, 10),
    )  # fmt: skip


def _built(how: str) -> nn.Module:
    layers = _seed_cnn_layers()
    if how == "placeholders":
        x = L.Placeholder((None, 3, 32, 32))
        h = x
        for layer in layers:
            h = layer(h)
        return L.Functional(x, h)
    model = L.Sequential(*layers)
    if how == "build":
        model.build((None, 3, 32, 32))
    else:
        # a first call builds; it draws nothing, but moves the batch norm statistics
        model(torch.zeros(2, 3, 32, 32))
    return model


@pytest.mark.parametrize("how", ["build", "call", "placeholders"])
def test_seeded_build_draws_the_weights_of_the_hand_written_model(how: str) -> None:
    # torch's own constructors initialize the weights, in the same order and from the
    # same generator as the hand-written model, and nothing else draws from it
    torch.manual_seed(1234)
    hand = _seed_cnn_by_hand()
    after_hand = torch.get_rng_state()
    torch.manual_seed(1234)
    model = _built(how)
    assert torch.equal(torch.get_rng_state(), after_hand)
    if how == "call":
        ours, theirs = dict(model.named_parameters()), dict(hand.named_parameters())
    else:
        ours, theirs = model.state_dict(), hand.state_dict()
    assert len(ours) == len(theirs)
    for (name, mine), (hand_name, reference) in zip(ours.items(), theirs.items(), strict=True):
        assert mine.shape == reference.shape, (name, hand_name)
        assert torch.equal(mine, reference), (name, hand_name)
    if how != "placeholders":
        assert list(ours) == list(theirs)


def test_distributed_data_parallel_on_gloo() -> None:
    import torch.distributed as dist

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        model = _residual().train()
        ddp = nn.parallel.DistributedDataParallel(model)
        ddp(torch.randn(4, 2, 6, 6)).sum().backward()
        assert all(p.grad is not None for p in model.parameters())
    finally:
        dist.destroy_process_group()
    dp = nn.DataParallel(_cnn())
    assert dp(torch.randn(2, 2, 6, 6)).shape == (2, 3)
