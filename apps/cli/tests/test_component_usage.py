"""A component's usage line lists its options before the program's words: everything
from the first program word on goes to the program, so a user who follows the usage line
must write the options first."""

from __future__ import annotations

import pytest

from .cli_process import torchx


@pytest.mark.parametrize(
    ("component", "words"),
    [("utils.sh", "[args ...]"), ("utils.python", "[args ...]"), ("dist.ddp", "[script_args ...]")],
)
def test_usage_lists_the_programs_words_last(component: str, words: str) -> None:
    proc = torchx("run", component, "--help")
    assert proc.returncode == 0, proc.stderr
    usage = proc.stdout.splitlines()[0]
    assert usage.startswith(f"usage: {component} [--") and usage.endswith(f" {words}"), usage
    assert usage.count("...") == 1


def test_a_command_written_in_the_usage_order_runs() -> None:
    proc = torchx("run", "utils.sh", "--env", "GREETING=hi", "echo $GREETING")
    assert proc.returncode == 0, proc.stderr
    assert "sh/0 hi" in proc.stderr


def test_an_option_written_among_the_programs_words_is_named_in_the_error() -> None:
    proc = torchx("run", "--dryrun", "utils.python", "a", "--script", "x.py")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "torchx: error: utils.python program: not given; give exactly one of --m, --c, "
        "--script; --script came after the program's first word 'a', so it went to the "
        "program: put the options of utils.python before the program's words"
    )
    # after --, the user said plainly that the words are the program's: no guess
    proc = torchx("run", "--dryrun", "utils.python", "--", "a", "--script", "x.py")
    assert proc.returncode == 2 and "came after" not in proc.stderr
