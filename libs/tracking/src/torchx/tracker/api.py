"""The tracker API at the module path torchx 0.7 used (``torchx.tracker.api``): every
public name of ``torchx.tracker``, under this path too.

Trackers are found through ``load_group`` and ``load_module`` as read from this module
when they are built, so code that patches them here (as 0.7's tests do) takes effect.
"""

import torchx.tracker as _tracker
from torchx.tracker import *  # noqa: F403
from torchx.tracker._environ import load_group, load_module

__all__ = [*_tracker.__all__, "load_group", "load_module"]
