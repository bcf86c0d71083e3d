"""The fsspec tracker backend, at the module path torchx 0.7 used for it."""

from torchx.tracker._fsspec_tracker import FsspecTracker, create
from torchx.tracker._fsspec_tracker import _stamp as generate_filename

__all__ = ["FsspecTracker", "create", "generate_filename"]
