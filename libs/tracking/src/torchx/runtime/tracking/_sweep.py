"""The key a trial of a sweep stores its results under, so that ``torchx status SWEEP
--results URL`` finds each trial's document without being told more."""

from __future__ import annotations

import os
import re

# Twins of torchx.schedulers.sweep_names (ENV_SWEEP_ID, ENV_SWEEP_INDEX, SWEEP_ID_PATTERN,
# SWEEP_ID_FORM and sweep_trial's handle -> id): this package may import nothing else of
# torchx, so the names are repeated here; tests/integration/test_sweep_key_twins.py keeps
# them equal.
ENV_SWEEP_ID = "TORCHX_SWEEP_ID"
ENV_SWEEP_INDEX = "TORCHX_SWEEP_INDEX"
SWEEP_ID_PATTERN = r"sweep-[a-z2-7]{4,32}"
SWEEP_ID_FORM = "sweep- and 4 to 32 of a-z and 2-7, e.g. sweep-abcd2345"
_SWEEP_ID = re.compile(SWEEP_ID_PATTERN)


def sweep_trial_key(sweep: str | None = None, index: int | str | None = None) -> str:
    """``"<sweep id>/<trial index>"``, e.g. ``"sweep-k3x7q/2"``: the key a trial stores
    its results under. In a trial, both come from the environment the runner gives it
    (``TORCHX_SWEEP_ID``, the sweep's handle, and ``TORCHX_SWEEP_INDEX``)::

        FsspecResultTracker(url)[sweep_trial_key()] = {"val_loss": 0.3}

    and ``torchx status SWEEP --results url --objective val_loss`` ranks the trials on it.
    The key holds the sweep's id, not the index alone, so sweeps sharing one ``url`` never
    read each other's results. ``sweep`` is a sweep handle (``SCHEDULER://SESSION/ID``)
    or its id alone (either may end in "/"). ValueError, naming the variable, outside a
    sweep's trial when either is not given.
    """
    if sweep is None:
        sweep = _from_env(ENV_SWEEP_ID)
    if index is None:
        index = _from_env(ENV_SWEEP_INDEX)
    sweep_id = sweep.rstrip("/").rpartition("/")[2]  # a handle may end in "/"
    if not _SWEEP_ID.fullmatch(sweep_id):
        raise ValueError(
            f"sweep: got {sweep!r}, whose id {sweep_id!r} is not a sweep id (a sweep id is "
            f"{SWEEP_ID_FORM}); give the handle `torchx run --sweep` printed"
            " (SCHEDULER://SESSION/sweep-ID) or its id"
        )
    text = str(index)
    if isinstance(index, bool) or not text.isdigit() or not text.isascii():
        raise ValueError(f"trial index: got {index!r}; give a whole number >= 0")
    return f"{sweep_id}/{int(text)}"


def _from_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise ValueError(
            f"{name} is not set: this process is not a trial of a sweep (`torchx run"
            " --sweep` sets it); pass sweep_trial_key(sweep, index) explicitly"
        )
    return value
