"""pytorch/torchx's ``torchx.runtime.tracking.api``: the same tracker names, defined in
``torchx.runtime.tracking``."""

from torchx.runtime.tracking import FsspecResultTracker, Key, Result, ResultTracker

# pytorch/torchx's names for a key (``tracker[key]``) and for one result value.
KeyType = Key
ResultType = Result

__all__ = ["FsspecResultTracker", "KeyType", "ResultTracker", "ResultType"]
