"""The tracker API at the module path torchx 0.7 used (``torchx.tracker.api``): every
public name of ``torchx.tracker``, under this path too."""

import torchx.tracker as _tracker
from torchx.tracker import *  # noqa: F403

__all__ = list(_tracker.__all__)
