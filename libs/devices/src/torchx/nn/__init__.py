"""Modules that follow :func:`torchx.devices.device_scope`.

``torchx.nn.Module`` is a drop-in ``torch.nn.Module``; everything else of ``torch.nn`` is used
from torch itself.
"""

from torchx.nn._module import Module

__all__ = ["Module"]
