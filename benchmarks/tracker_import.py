"""Start-up cost of ``import torchx.tracker`` against a bare interpreter, in one run.

    uv run python benchmarks/tracker_import.py [--runs 40]

Runs ``python -c pass``, ``python -c "import torchx.tracker"`` and, for scale,
``python -c "import torchx.runtime.tracking"`` in turn (so all see the same machine load
and a warm file cache), and reports medians, the differences and the ratio. Target: the
tracker import adds under 30 ms. It also lists any backend library the import pulled in
(there should be none: fsspec and mlflow load with the trackers that use them).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

HEAVY = ("mlflow", "fsspec", "torch", "numpy", "pandas", "dataclasses", "typing", "json")
CONTENDERS = {
    "bare": "pass",
    "tracker": "import torchx.tracker",
    "runtime.tracking": "import torchx.runtime.tracking",
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(code: str) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one interpreter running ``code``.

    CPU time is what to read on a loaded machine: waiting for a core is not counted.
    """
    start, cpu = time.perf_counter(), _cpu()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    runs = parser.parse_args().runs

    for code in CONTENDERS.values():  # warm the file cache
        _time(code)
    wall: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    cpu: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    for _ in range(runs):
        for name, code in CONTENDERS.items():
            w, c = _time(code)
            wall[name].append(w)
            cpu[name].append(c)

    probe = f"import sys, torchx.tracker\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    heavy = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout.strip()

    for label, samples in (("wall", wall), ("cpu", cpu)):
        median = {name: statistics.median(t) for name, t in samples.items()}
        b = median["bare"]
        print(f"[{label}] python -c pass              median {b * 1000:7.1f} ms over {runs} runs")
        for name in ("tracker", "runtime.tracking"):
            m = median[name]
            print(
                f"[{label}] import torchx.{name:<16} median {m * 1000:7.1f} ms,"
                f" adds {(m - b) * 1000:6.1f} ms, ratio {m / b:5.2f}x"
            )
    print("target: import torchx.tracker adds < 30 ms")
    print(f"heavy modules imported by torchx.tracker: {heavy or 'none'}")


if __name__ == "__main__":
    main()
