"""``torchx log`` writes a finished log in buffered blocks and a followed one line by line."""

from __future__ import annotations

import io
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


@pytest.mark.parametrize(("tail", "most_flushes"), [(False, 0), (True, 1000)])
def test_flushes_per_line_only_when_following(tail: bool, most_flushes: int) -> None:
    out = _CountingOut()
    print_logs(_Lines(1000), "slurm://torchx/1", [("r", 0)], tail=tail, out=out)  # type: ignore[arg-type]
    lines = out.getvalue().splitlines()
    assert lines[0] == "r/0 line 0" and lines[-1] == "r/0 line 999" and len(lines) == 1000
    # a flush a line is a write call a line: ~2x the time of a large `torchx log > file`
    assert out.flushes == most_flushes
