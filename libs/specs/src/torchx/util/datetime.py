"""Dates as the schedulers' list filters take them."""

from __future__ import annotations

import time


def get_past_epoch_time(days_past: int) -> int:
    """The Unix time (whole seconds) ``days_past`` days before now."""
    return int(time.time() - days_past * 86400)


__all__ = ["get_past_epoch_time"]
