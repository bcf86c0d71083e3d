"""Start-up cost of ``import torchx.specs`` against a bare interpreter, in one run.

    uv run python benchmarks/specs_import.py [--runs 30]

Runs ``python -c pass`` and ``python -c "import torchx.specs"`` alternately (so both see the
same machine load and a warm file cache), and reports medians, the difference and the ratio.
It also lists any heavy module the import pulled in (there should be none).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

HEAVY = ("torch", "kfp", "docker", "kubernetes", "ray", "numpy", "yaml", "typer", "fsspec")


def _time(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs

    for _ in range(3):  # warm the file cache
        _time("import torchx.specs")
    bare, specs = [], []
    for _ in range(runs):
        bare.append(_time("pass"))
        specs.append(_time("import torchx.specs"))
    b, s = statistics.median(bare), statistics.median(specs)

    probe = f"import sys, torchx.specs\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    heavy = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout.strip()

    print(f"python -c pass            median {b * 1000:7.1f} ms over {runs} runs")
    print(f"python -c 'import specs'  median {s * 1000:7.1f} ms")
    print(f"import cost               {(s - b) * 1000:7.1f} ms  (target < 40 ms)")
    print(f"ratio vs bare interpreter {s / b:7.2f}x")
    print(f"heavy modules imported    {heavy or 'none'}")


if __name__ == "__main__":
    main()
