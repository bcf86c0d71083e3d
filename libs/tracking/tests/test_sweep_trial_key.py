"""``sweep_trial_key``: the key a trial of a sweep stores its results under."""

from __future__ import annotations

import pytest

from torchx.runtime.tracking import FsspecResultTracker, sweep_trial_key


def test_from_the_trial_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHX_SWEEP_ID", "local_cwd://torchx/sweep-k3x7q")
    monkeypatch.setenv("TORCHX_SWEEP_INDEX", "2")
    assert sweep_trial_key() == "sweep-k3x7q/2"


def test_given_explicitly_from_a_handle_or_an_id() -> None:
    assert sweep_trial_key("slurm://c1/sweep-abcd", 10) == "sweep-abcd/10"
    assert sweep_trial_key("sweep-abcd", "3") == "sweep-abcd/3"


def test_a_handle_ending_in_a_slash_is_the_same_sweep() -> None:
    assert sweep_trial_key("local_cwd://torchx/sweep-k3x7q/", 0) == "sweep-k3x7q/0"
    assert sweep_trial_key("sweep-abcd/", 1) == "sweep-abcd/1"


def test_is_a_valid_key_of_its_own_folder(tmp_path: object) -> None:
    tracker = FsspecResultTracker(str(tmp_path))
    tracker[sweep_trial_key("sweep-abcd", 0)] = {"val_loss": 0.5}
    assert tracker.path_of(sweep_trial_key("sweep-abcd", 0)).endswith("/sweep-abcd/0.json")
    assert list(tracker) == ["sweep-abcd/0"]


def test_outside_a_sweep_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCHX_SWEEP_ID", raising=False)
    monkeypatch.setenv("TORCHX_SWEEP_INDEX", "2")
    with pytest.raises(ValueError, match=r"^TORCHX_SWEEP_ID is not set: this process is not"):
        sweep_trial_key()
    monkeypatch.setenv("TORCHX_SWEEP_ID", "local_cwd://torchx/sweep-k3x7q")
    monkeypatch.delenv("TORCHX_SWEEP_INDEX")
    with pytest.raises(ValueError, match=r"^TORCHX_SWEEP_INDEX is not set"):
        sweep_trial_key()


@pytest.mark.parametrize(
    ("sweep", "index", "said"),
    [
        ("local_cwd://torchx/train-1", 0, "sweep: got 'local_cwd://torchx/train-1'"),
        ("sweep-abcd", -1, "trial index: got -1"),
        ("sweep-abcd", "1/..", "trial index: got '1/..'"),
        ("sweep-abcd", True, "trial index: got True"),
    ],
)
def test_refuses_what_is_no_sweep_or_index(sweep: str, index: object, said: str) -> None:
    with pytest.raises(ValueError, match=f"^{said}"):
        sweep_trial_key(sweep, index)  # type: ignore[arg-type]


def test_a_handle_whose_id_is_not_a_sweep_id_says_what_an_id_looks_like() -> None:
    # the handle has the right form; its id misses the pattern (too short)
    with pytest.raises(ValueError) as info:
        sweep_trial_key("local_cwd://torchx/sweep-abc", 2)
    assert str(info.value) == (
        "sweep: got 'local_cwd://torchx/sweep-abc', whose id 'sweep-abc' is not a sweep id "
        "(a sweep id is sweep- and 4 to 32 of a-z and 2-7, e.g. sweep-abcd2345); give the "
        "handle `torchx run --sweep` printed (SCHEDULER://SESSION/sweep-ID) or its id"
    )
