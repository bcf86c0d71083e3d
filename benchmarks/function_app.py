"""A Python function run as an app against the same call in a bare child process.

``Executor(scheduler="local_cwd").submit(noop).result()`` (pickle the call, write it to a
private folder, submit the builtin ``function.call`` component, its supervisor and job
process, read the outcome back) against ``subprocess.run([sys.executable, "-c", ...])``
whose child unpickles the same call from a file, calls it and pickles the result back:
the least any out-of-process call costs. Target: at most 1.5x.

Usage: uv run python benchmarks/function_app.py [--repeats N]
Each figure is the median of N repeats (default 9), the two interleaved so both see the
same machine load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import cloudpickle  # type: ignore[import-untyped]

from torchx.runner import Executor, get_runner

# What the baseline's child does: the job's work without torchx.
CHILD = (
    "import sys, cloudpickle\n"
    "fn, args, kwargs = cloudpickle.loads(open(sys.argv[1], 'rb').read())\n"
    "open(sys.argv[2], 'wb').write(cloudpickle.dumps(fn(*args, **kwargs)))\n"
)


def noop() -> None:
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_STATE_HOME"] = os.path.join(tmp, "state")
        call, result = os.path.join(tmp, "call.pkl"), os.path.join(tmp, "result.pkl")
        runner = get_runner()
        ex = Executor(scheduler="local_cwd", runner=runner)

        def bare() -> None:
            with open(call, "wb") as f:
                f.write(cloudpickle.dumps((noop, (), {})))
            subprocess.run([sys.executable, "-c", CHILD, call, result], check=True)
            with open(result, "rb") as f:
                assert cloudpickle.loads(f.read()) is None

        def app() -> None:
            assert ex.submit(noop).result() is None

        app()  # the first submit imports the scheduler and the runtime: not measured
        bare()
        times: dict[str, list[float]] = {"bare": [], "app": []}
        runs: dict[str, Callable[[], None]] = {"bare": bare, "app": app}
        for _ in range(args.repeats):
            for name, fn in runs.items():
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        ex.shutdown()
    b, a = statistics.median(times["bare"]), statistics.median(times["app"])
    print(f"subprocess.run python -c (unpickle, call, pickle): {b * 1000:7.1f} ms")
    print(f"Executor(local_cwd).submit(noop).result():        {a * 1000:7.1f} ms")
    print(f"ratio: {a / b:.2f}x (target <= 1.5x), median of {args.repeats}")


if __name__ == "__main__":
    main()
