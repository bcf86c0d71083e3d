import signal

from torchx.schedulers.exit_codes import signal_name


def test_a_negative_code_names_its_signal_even_one_without_a_name() -> None:
    assert signal_name(-signal.SIGKILL) == " (killed by SIGKILL)"
    unnamed = max(signal.valid_signals()) + 1  # no signal of this platform has it
    assert signal_name(-unnamed) == f" (killed by signal {unnamed})"


def test_no_signal_for_an_exit_or_no_code() -> None:
    assert [signal_name(c) for c in (None, 0, 1, 137)] == ["", "", "", ""]
