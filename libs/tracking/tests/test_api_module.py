"""pytorch/torchx's ``torchx.runtime.tracking.api`` module path."""

from __future__ import annotations

import torchx.runtime.tracking as tracking
from torchx.runtime.tracking import api


def test_api_module_re_exports_the_tracker() -> None:
    assert api.FsspecResultTracker is tracking.FsspecResultTracker
    assert api.ResultTracker is tracking.ResultTracker
    tracker: api.ResultTracker = api.FsspecResultTracker("memory://api-module-test")
    key: api.KeyType = 3
    value: api.ResultType = 0.5
    tracker.put(key, loss=value)
    assert tracker[3] == {"loss": 0.5} and tracker.get(3) == {"loss": 0.5}
