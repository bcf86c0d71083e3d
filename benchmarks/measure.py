"""What every benchmark's report shares: CPU time spent, and the machine's load.

CPU time (this process's and its reaped children's) is what other work on a shared
machine leaves alone, unlike wall-clock time; the load average says how shared it was.
Imported by the benchmarks beside it (run as scripts, so this folder is on the path).
"""

from __future__ import annotations

import os
import resource


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its children reaped so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as ``"1.00, 0.80, 0.50"``."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())
