from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

import torchx.devices as tx


@pytest.fixture(autouse=True)
def _clean_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts and must end outside every scope, with the default policy."""
    monkeypatch.delenv("TORCHX_MISSING_GPU", raising=False)
    tx.reset_missing_gpu_policy()
    assert tx.current_scope() is None
    yield
    tx.reset_missing_gpu_policy()
    assert tx.current_scope() is None, "a test left a device scope open"
    assert torch.get_default_device() == torch.device("cpu")
    assert torch.get_default_dtype() == torch.float32
