"""Exception and warning types raised by torchx.devices."""

from __future__ import annotations


class DeviceUnavailableError(RuntimeError):
    """A scope asked for a GPU or another accelerator (cuda, mps, xpu) that this machine does
    not have."""


class GPUFallbackWarning(UserWarning):
    """A scope asked for a missing GPU or another missing accelerator (cuda, mps, xpu) and runs
    on the CPU instead, as its policy allows."""
