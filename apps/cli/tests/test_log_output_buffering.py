"""``torchx log`` writes a finished log in buffered blocks and a followed one line by line,
and the log comes before the lines that follow it on stderr."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from torchx.cli._logs import print_logs


class _Lines:
    """A runner whose one replica logged ``count`` lines."""

    def __init__(self, count: int) -> None:
        self.count = count

    def log_lines(self, handle: str, role: str, k: int, **kwargs: Any) -> Iterator[str]:
        return (f"line {i}\n" for i in range(self.count))


class _CountingOut(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


# a finished log: one flush at the end; a followed one: one a line, and the one at the end
@pytest.mark.parametrize(("tail", "most_flushes"), [(False, 1), (True, 1001)])
def test_flushes_per_line_only_when_following(tail: bool, most_flushes: int) -> None:
    out = _CountingOut()
    print_logs(_Lines(1000), "slurm://torchx/1", [("r", 0)], tail=tail, out=out)  # type: ignore[arg-type]
    lines = out.getvalue().splitlines()
    assert lines[0] == "r/0 line 0" and lines[-1] == "r/0 line 999" and len(lines) == 1000
    # a flush a line is a write call a line: ~2x the time of a large `torchx log > file`
    assert out.flushes == most_flushes


# A child whose stdout is a pipe, so block-buffered: it prints a 3-line log, then what
# `torchx log` writes next on stderr (the --exit-code status, or the error of a log that broke).
_CHILD = """
import sys
from torchx.cli._logs import print_logs

class Runner:
    def log_lines(self, handle, role, k, **kwargs):
        yield from (f"line {i}\\n" for i in range(3))
        if sys.argv[1] == "breaks":
            raise RuntimeError("the scheduler lost the log")

try:
    print_logs(Runner(), "slurm://torchx/1", [("r", 0)])
    print("slurm://torchx/1 FAILED", file=sys.stderr)
except RuntimeError as e:
    print(f"torchx: error: {e}", file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("case", "last"),
    [("ends", "slurm://torchx/1 FAILED"), ("breaks", "torchx: error: the scheduler lost the log")],
)
def test_the_log_comes_before_what_follows_on_a_shared_pipe(case: str, last: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, case],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # `torchx log 2>&1 | tee`
        env=env,
        text=True,
        timeout=120,
        check=True,
    )
    assert child.stdout.splitlines() == ["r/0 line 0", "r/0 line 1", "r/0 line 2", last]
