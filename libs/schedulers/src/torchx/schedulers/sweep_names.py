"""The names a sweep's trials carry, which the runner sets and schedulers read back.

The runner gives every replica of a trial ``TORCHX_SWEEP_ID`` (its sweep's handle) and
``TORCHX_SWEEP_INDEX`` (the trial's index); a scheduler whose list answer holds the apps'
environment reads them to say which sweep and trial an app is. A sweep id is
``sweep-`` and 4 to 32 of ``a-z2-7``; :data:`SWEEP_ID_PATTERN` is that, as regex text
with no anchors, for the patterns that find one inside a longer name or comment.
"""

from __future__ import annotations

ENV_SWEEP_ID = "TORCHX_SWEEP_ID"
ENV_SWEEP_INDEX = "TORCHX_SWEEP_INDEX"
SWEEP_ID_PATTERN = r"sweep-[a-z2-7]{4,32}"
#: SWEEP_ID_PATTERN in words, for the messages that refuse an id outside it
SWEEP_ID_FORM = "sweep- and 4 to 32 of a-z and 2-7, e.g. sweep-abcd2345"


def sweep_trial(sweep: str | None, index: str | None) -> str:
    """``sweep-ID/INDEX`` from a sweep's handle (or id) and a trial's index; "" for no
    sweep, ``sweep-ID`` for no index. A handle's trailing ``/`` (written by hand into a
    label or variable) is not part of its id."""
    sweep_id = (sweep or "").rstrip("/").rpartition("/")[2]
    if not sweep_id:
        return ""
    return f"{sweep_id}/{index}" if index else sweep_id


__all__ = ["ENV_SWEEP_ID", "ENV_SWEEP_INDEX", "SWEEP_ID_FORM", "SWEEP_ID_PATTERN", "sweep_trial"]
