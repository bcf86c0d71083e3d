"""Generic sizes (``cpu.small``, ``gpu.large``...) under pytorch/torchx's module path."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from torchx.specs._app import Resource
from torchx.specs._named_resources import GENERIC, GiB

NAMED_RESOURCES: Mapping[str, Callable[[], Resource]] = GENERIC

__all__ = ["NAMED_RESOURCES", "GiB"]
