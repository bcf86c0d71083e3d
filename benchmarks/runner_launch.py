"""How much the runner and local_cwd add to starting processes, as ratios in one run.

1. ``Runner.run`` + ``Runner.wait`` of a one-replica app running ``true``, against
   ``subprocess.Popen(["true"]).wait()``.
2. One app with 256 replicas of ``true`` launched and waited for, against a bare loop of
   256 ``subprocess.Popen`` followed by waiting for each (target: at most 1.5x).
3. How late ``Runner.wait`` sees the end of an app: from the moment its only replica
   exits (the replica is killed by a signal it sends itself, after printing the time) to
   the return of ``wait`` (target: about 50 ms).

Usage: uv run python benchmarks/runner_launch.py [--repeats N]
Each measurement is the median of N repeats (default 7); baselines are measured
interleaved with the runner so both see the same machine load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from measure import cpu_seconds, load_average

from torchx.runner import get_runner
from torchx.schedulers import Stream
from torchx.specs import AppDef, AppState, Role

TRUE = "/bin/true"


def _median(fn: Callable[[], None], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--replicas", type=int, default=256)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as state, get_runner(state_dir=state) as runner:

        def run_app(n: int) -> Callable[[], None]:
            app = AppDef("bench", [Role("r", image="", entrypoint=TRUE, num_replicas=n)])

            def go() -> None:
                status = runner.wait(runner.run(app))
                assert status is not None and status.state == AppState.SUCCEEDED

            return go

        def bare(n: int) -> Callable[[], None]:
            def go() -> None:
                procs = [subprocess.Popen([TRUE]) for _ in range(n)]
                for p in procs:
                    p.wait()

            return go

        run_app(1)()  # warm imports and the page cache
        rows, cpu_rows = [], []
        for label, n in (("1 replica", 1), (f"{args.replicas} replicas", args.replicas)):
            base_runs, runner_runs, base_cpu, runner_cpu = [], [], [], []
            for _ in range(args.repeats):
                c0 = cpu_seconds()
                base_runs.append(_median(bare(n), 1))
                c1 = cpu_seconds()
                runner_runs.append(_median(run_app(n), 1))
                c2 = cpu_seconds()
                base_cpu.append(c1 - c0)
                runner_cpu.append(c2 - c1)
            base = statistics.median(base_runs)
            ours = statistics.median(runner_runs)
            rows.append((label, base, ours))
            cpu_rows.append((label, statistics.median(base_cpu), statistics.median(runner_cpu)))

        # The replica prints its clock and at once kills itself: its exit is that instant.
        script = "import os, time; print(time.time(), flush=True); os.kill(os.getpid(), 9)"
        late = AppDef("late", [Role("r", image="", entrypoint=sys.executable, args=["-c", script])])
        delays = []
        for _ in range(args.repeats):
            handle = runner.run(late)
            status = runner.wait(handle)
            seen = time.time()
            assert status is not None and status.state == AppState.FAILED
            (line,) = runner.log_lines(handle, "r", streams=Stream.STDOUT)
            delays.append(seen - float(line))

    print(f"{'case':<14} {'subprocess':>12} {'runner':>12} {'ratio':>7}")
    for label, base, ours in rows:
        print(f"{label:<14} {base * 1e3:>10.1f}ms {ours * 1e3:>10.1f}ms {ours / base:>6.2f}x")
    # CPU time (this process's and its reaped children's) is what other work on a shared
    # machine leaves alone; the supervisor's watchdog is not counted (never our child).
    print(f"{'CPU time':<14} {'subprocess':>12} {'runner':>12} {'ratio':>7}")
    for label, base, ours in cpu_rows:
        print(f"{label:<14} {base * 1e3:>10.1f}ms {ours * 1e3:>10.1f}ms {ours / base:>6.2f}x")
    print(f"load average {load_average()}")
    print(
        f"end of app seen by wait: median {statistics.median(delays) * 1e3:.1f}ms, "
        f"max {max(delays) * 1e3:.1f}ms after the replica's exit"
    )


if __name__ == "__main__":
    main()
