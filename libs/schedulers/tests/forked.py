"""Supervising in a forked child, for tests that drive a ``Supervisor`` by hand."""

from __future__ import annotations

import os
from collections.abc import Callable


def in_child(app_dir: str, drive: Callable[[str, int], None]) -> bytes:
    """Run ``drive(app_dir, report_fd)`` in a forked child (a supervisor takes over its
    process: signals, children, working directory); what it wrote to the report fd."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child reports through the pipe
        code = 1
        try:
            os.close(r)
            drive(app_dir, w)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        report = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return report
