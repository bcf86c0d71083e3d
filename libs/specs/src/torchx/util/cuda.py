"""Whether this host can put tensors on a CUDA device."""

from __future__ import annotations


def has_cuda_devices() -> bool:
    """True when the installed torch is built with CUDA *and* the host has a CUDA device.

    ``torch.cuda.is_available()`` alone is not enough on some builds, so the device count
    is asked too. torch is imported here, only when this is called.
    """
    try:
        import torch
    except ImportError as e:
        raise ImportError(
            "torchx.util.cuda.has_cuda_devices needs torch: pip install 'torchx-specs[cuda]'"
        ) from e
    return bool(torch.cuda.is_available() and torch.cuda.device_count() > 0)


__all__ = ["has_cuda_devices"]
