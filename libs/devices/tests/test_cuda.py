"""Scopes, self-placement and DataParallel on real GPUs. Skipped without CUDA."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

import torchx.devices as tx
import torchx.nn as nnx

from .seed_blocks import GPU_SCOPING, NNX_MODULE

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

GPU0 = torch.device("cuda", 0)


class Net(nnx.Module):
    def __init__(self) -> None:
        self.fc = nn.Linear(8, 4)
        self.moves = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)  # type: ignore[no-any-return]

    def to(self, *args: Any, **kwargs: Any) -> Any:
        self.moves += 1
        return super().to(*args, **kwargs)


@pytest.mark.parametrize("form", [0, "cuda:0", "gpu:0", "cuda", GPU0], ids=repr)
def test_gpu_forms_place_factories_on_gpu_zero(form: object) -> None:
    with tx.device_scope(form) as scope:  # type: ignore[arg-type]
        assert scope.device == GPU0
        assert torch.zeros((3, 6)).device == GPU0
        assert torch.empty(0).new_ones((3, 6)).device == GPU0
        assert torch.arange(4).device == GPU0
        with tx.device_scope(-1):
            assert torch.ones((3, 6)).device == torch.device("cpu")
    assert torch.zeros(1).device == torch.device("cpu")


def test_gpu_scope_with_dtype() -> None:
    with tx.device_scope(0, dtype=torch.float64):
        made = torch.randn(2)
    assert (made.device, made.dtype) == (GPU0, torch.float64)


def test_missing_gpu_index_follows_the_policy() -> None:
    absent = torch.cuda.device_count()
    with pytest.raises(tx.DeviceUnavailableError, match=f"asks for GPU \\[{absent}\\]"):
        tx.device_scope(absent)
    with pytest.warns(tx.GPUFallbackWarning):
        assert tx.device_scope(absent, on_missing_gpu="cpu").device == torch.device("cpu")


def test_module_moves_to_the_gpu_once() -> None:
    model = Net()
    with tx.device_scope("cuda:0"):
        for _ in range(3):
            y = model(torch.zeros(2, 8))
    assert y.device == GPU0
    assert model.fc.weight.device == GPU0
    assert model.moves == 1
    model.cpu()
    with tx.device_scope(-1):
        assert model(torch.zeros(2, 8)).device == torch.device("cpu")


def test_a_move_by_a_plain_parent_is_noticed_on_the_gpu() -> None:
    model = Net()
    parent = nn.Sequential(model)  # torch moves the child without calling its .to()
    with tx.device_scope(-1):
        model(torch.zeros(2, 8))  # placed on the CPU
    parent.cuda()
    with tx.device_scope(-1):
        assert model(torch.zeros(2, 8)).device == torch.device("cpu")  # moved back
    assert model.fc.weight.device == torch.device("cpu")


@pytest.mark.parametrize("form", ["cuda:all", [0]], ids=repr)
def test_data_parallel_over_the_gpus_present(form: object) -> None:
    with tx.device_scope(form) as scope:  # type: ignore[arg-type]
        assert scope.device_ids == (
            tuple(range(torch.cuda.device_count())) if form == "cuda:all" else (0,)
        )
        wrapped = tx.DataParallel(Net())
        assert isinstance(wrapped, nn.DataParallel)
        assert wrapped.device_ids == list(scope.device_ids)
        y = wrapped(torch.randn(6, 8))
    assert (tuple(y.shape), y.device) == ((6, 4), GPU0)


def test_data_parallel_in_a_single_gpu_scope_moves_the_module() -> None:
    model = Net()
    with tx.device_scope(0):
        assert tx.DataParallel(model) is model
    assert model.fc.weight.device == GPU0


def test_seed_blocks_on_gpu_zero() -> None:
    # The seed names GPUs 2 and 3; with fewer GPUs, run the same blocks on GPU 0.
    scoping = GPU_SCOPING.replace("device_scope(2)", "device_scope(0)").replace("gpu:2", "gpu:0")
    exec(compile(scoping, "<seed>", "exec"), {"torch": torch})
    namespace: dict[str, Any] = {"torch": torch}
    exec(
        compile(NNX_MODULE.replace("device_scope(3)", "device_scope(0)"), "<seed>", "exec"),
        namespace,
    )
    assert (tuple(namespace["y"].shape), namespace["y"].device) == ((4, 30), GPU0)
    assert {p.device for p in namespace["model"].parameters()} == {GPU0}
