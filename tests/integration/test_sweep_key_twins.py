"""torchx.runtime.tracking repeats the sweep names of torchx.schedulers.sweep_names (it
may import nothing else of torchx); here, where both can be imported, they must agree."""

from __future__ import annotations

import re

import pytest

from torchx.runner._sweep_plan import new_sweep_id  # the ids the runner gives
from torchx.runtime.tracking import _sweep as tracking_names
from torchx.runtime.tracking import sweep_trial_key
from torchx.schedulers import sweep_names


def test_the_environment_names_and_id_pattern_are_the_same() -> None:
    assert tracking_names.ENV_SWEEP_ID == sweep_names.ENV_SWEEP_ID
    assert tracking_names.ENV_SWEEP_INDEX == sweep_names.ENV_SWEEP_INDEX
    assert tracking_names.SWEEP_ID_PATTERN == sweep_names.SWEEP_ID_PATTERN
    assert tracking_names.SWEEP_ID_FORM == sweep_names.SWEEP_ID_FORM


@pytest.mark.parametrize("scheduler", ["local_cwd", "slurm", "kubernetes", "docker"])
def test_both_derive_the_same_key_from_a_runner_handle(scheduler: str) -> None:
    for _ in range(20):
        handle = f"{scheduler}://session/{new_sweep_id()}"
        for index in ("0", "7", "31"):
            assert sweep_trial_key(handle, index) == sweep_names.sweep_trial(handle, index)


@pytest.mark.parametrize(
    "sweep_id", ["sweep-1", "sweep-", "sweep-abc", "sweep-ABCD", "sweep-" + "a" * 33]
)
def test_an_id_outside_the_pattern_is_refused_by_the_tracking_twin(sweep_id: str) -> None:
    assert not re.fullmatch(sweep_names.SWEEP_ID_PATTERN, sweep_id)
    with pytest.raises(ValueError) as info:
        sweep_trial_key(f"local_cwd://torchx/{sweep_id}", 0)
    # the id is named and what an id looks like said, in the runner's words
    assert str(info.value).startswith(
        f"sweep: got 'local_cwd://torchx/{sweep_id}', whose id {sweep_id!r} is not a sweep id"
        f" (a sweep id is {sweep_names.SWEEP_ID_FORM})"
    ), info.value
    assert "e.g. sweep-abcd2345" in str(info.value)
