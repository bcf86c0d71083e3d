"""The fsspec tracker backend, at the module path torchx 0.7 used for it."""

from torchx.tracker._fsspec_tracker import FsspecTracker, create

__all__ = ["FsspecTracker", "create"]
