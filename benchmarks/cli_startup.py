"""Wall time of the ``torchx`` command against ``python -c pass``, in one run.

    uv run python benchmarks/cli_startup.py [--runs 15]

Times, alternately so that all see the same machine load and a warm file cache:

- ``python -c pass`` (the baseline: interpreter start-up);
- ``torchx --help``;
- ``torchx run --dryrun utils.echo``;
- ``torchx run utils.echo`` on the local scheduler (submit, wait, print the log line).

Each is reported as a median and as a ratio to the baseline. The reference peer (torchx
0.7.0, argparse) measured about 170, 300 and 490 ms for the three commands on this machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TORCHX = str(Path(sys.executable).with_name("torchx"))
PEER_MS = {"--help": 170.0, "run --dryrun utils.echo": 300.0, "run utils.echo": 490.0}


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs

    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "--help": [TORCHX, "--help"],
        "run --dryrun utils.echo": [TORCHX, "run", "--dryrun", "utils.echo"],
        "run utils.echo": [TORCHX, "run", "utils.echo"],
    }
    with tempfile.TemporaryDirectory() as state:
        # A scratch local-scheduler state, so the benchmark leaves no apps behind. Bytecode
        # caching is forced on: an installed package has its .pyc files, and without them
        # every run would time the compiler instead of the command.
        env = {**os.environ, "XDG_STATE_HOME": state}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for argv in cases.values():  # warm the file cache and the bytecode
            _time(argv, env)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, argv in cases.items():
                times[name].append(_time(argv, env))

    base = statistics.median(times["python -c pass"])
    print(f"{'command':28} {'median':>9} {'ratio':>7}   (runs={runs})")
    for name, samples in times.items():
        med = statistics.median(samples)
        line = f"{name:28} {med * 1000:7.1f}ms {med / base:6.1f}x"
        if name in PEER_MS:
            line += f"   peer {PEER_MS[name]:.0f} ms"
        print(line)


if __name__ == "__main__":
    main()
