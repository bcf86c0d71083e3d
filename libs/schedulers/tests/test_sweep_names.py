"""The names a sweep's trials carry: what ``torchx list`` shows for a trial, and what a
sweep id is (the runner's records and the schedulers' name patterns share it)."""

from __future__ import annotations

import re

from torchx.schedulers.sweep_names import (
    ENV_SWEEP_ID,
    ENV_SWEEP_INDEX,
    SWEEP_ID_PATTERN,
    sweep_trial,
)


def test_the_environment_names_are_torchxs() -> None:
    assert (ENV_SWEEP_ID, ENV_SWEEP_INDEX) == ("TORCHX_SWEEP_ID", "TORCHX_SWEEP_INDEX")


def test_a_trial_reads_as_its_sweep_id_and_index() -> None:
    assert sweep_trial("local_cwd://torchx/sweep-abcd2345", "3") == "sweep-abcd2345/3"
    assert sweep_trial("sweep-abcd2345", None) == "sweep-abcd2345"  # one app runs them all
    assert sweep_trial(None, "3") == sweep_trial("", None) == ""  # not a trial
    # a trailing '/' is not part of the id
    assert sweep_trial("local_cwd://torchx/sweep-abcd2345/", "3") == "sweep-abcd2345/3"
    assert sweep_trial("sweep-abcd2345/", None) == "sweep-abcd2345"
    assert sweep_trial("/", "3") == ""


def test_a_sweep_id_is_sweep_and_4_to_32_base32_letters() -> None:
    whole = re.compile(rf"^{SWEEP_ID_PATTERN}$")
    assert whole.match("sweep-abcd") and whole.match("sweep-" + "a2" * 16)
    for not_one in ("sweep-abc", "sweep-" + "a" * 33, "sweep-ABCD", "sweep-abc1", "trial-abcd"):
        assert not whole.match(not_one), not_one
