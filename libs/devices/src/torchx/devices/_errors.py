"""Exception and warning types raised by torchx.devices."""

from __future__ import annotations


class DeviceUnavailableError(RuntimeError):
    """A scope asked for a GPU that this machine does not have."""


class GPUFallbackWarning(UserWarning):
    """A scope asked for a missing GPU and runs on the CPU instead, as its policy allows."""
