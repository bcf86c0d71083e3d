"""The seed README's device blocks, run as written."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import torchx.devices as tx

from .seed_blocks import GPU_SCOPING, NNX_MODULE

GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0


def _run(block: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"torch": torch}
    exec(compile(block, "<seed>", "exec"), namespace)
    return namespace


@pytest.mark.skipif(GPUS < 3, reason=f"the seed names GPU 2; this machine has {GPUS} GPU(s)")
def test_gpu_scoping_block_as_written_on_gpus() -> None:
    _run(GPU_SCOPING)


@pytest.mark.skipif(GPUS < 4, reason=f"the seed names GPU 3; this machine has {GPUS} GPU(s)")
def test_nnx_block_as_written_on_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    namespace = _run(NNX_MODULE)
    y = namespace["y"]
    assert (tuple(y.shape), y.device) == ((4, 30), torch.device("cuda", 3))
    assert {p.device for p in namespace["model"].parameters()} == {torch.device("cuda", 3)}
    assert "tensor(" in capsys.readouterr().out


@pytest.mark.skipif(GPUS >= 3, reason="exercises the missing-GPU fallback")
def test_gpu_scoping_block_as_written_falls_back_to_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHX_MISSING_GPU", "cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _run(GPU_SCOPING)
    fallbacks = [w for w in caught if issubclass(w.category, tx.GPUFallbackWarning)]
    assert len(fallbacks) == 2, "one warning per scope that named GPU 2"


@pytest.mark.skipif(GPUS >= 3, reason="GPU 2 exists on this machine")
def test_gpu_scoping_block_raises_clearly_without_the_gpu() -> None:
    with pytest.raises(tx.DeviceUnavailableError, match=r"device=2 asks for GPU \[2\]"):
        _run(GPU_SCOPING)
    assert tx.current_scope() is None


@pytest.mark.skipif(GPUS >= 4, reason="exercises the missing-GPU fallback")
def test_nnx_block_as_written_falls_back_to_cpu(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TORCHX_MISSING_GPU", "cpu")
    with pytest.warns(tx.GPUFallbackWarning, match="device=3 asks for GPU"):
        namespace = _run(NNX_MODULE)
    y = namespace["y"]
    assert (tuple(y.shape), y.device) == ((4, 30), torch.device("cpu"))
    assert "tensor(" in capsys.readouterr().out


def test_nnx_block_on_the_meta_device_keeps_the_weights() -> None:
    # The seed's model in a scope whose device always exists: the meta device holds no
    # data, so a model built outside it is refused there rather than emptied, and one
    # built inside it runs there.
    namespace = _run(NNX_MODULE.split("with tx.device_scope")[0])
    model = namespace["MyModel"]()
    weight = model.fc1.weight.detach().clone()
    with tx.device_scope(torch.device("meta")):
        x = torch.zeros((4, 10))
        with pytest.raises(RuntimeError, match="would drop their values"):
            model(x)
        fresh = namespace["MyModel"]()
        y = fresh(x)
    assert torch.equal(model.fc1.weight, weight)
    assert (tuple(y.shape), y.device) == ((4, 30), torch.device("meta"))
