"""Describing a finished Ray app whose log is big: torchx's ``describe`` vs a baseline that
keeps every log event of the driver (what ``describe`` did before it kept only the last state).

The app prints ``--lines`` lines (70 characters each) through the direct driver, which
relays each as one log event. Both arms fetch the job's log with ``get_job_logs`` and build
the same description; the baseline parses the log keeping every event as a dict (as
``describe`` did before), torchx with ``latest_state`` (only the state events read). The
arms alternate so they see the same machine load; each figure is the median of N repeats,
and each arm's peak of Python memory (tracemalloc) is measured once, apart from the timings.

Usage: uv run python benchmarks/ray_describe_log.py [--lines N] [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from measure import load_average
from ray_submit import cluster

# The baseline rebuilds describe's steps from the scheduler's private parts (its job id split,
# its client, the driver's event parse), as no public name gives one step of ``describe``
# alone; benchmarks/ ships in no distribution, so nothing depends on these names staying.
from torchx.schedulers._ray_status import JobRecord, describe_response, events
from torchx.schedulers.ray_scheduler import RayScheduler
from torchx.specs import AppDef, AppState, Role


def keep_every_event(text: str) -> JobRecord:
    """The parse ``describe`` used before: every event of the log held, the last state kept."""
    held = list(events(text.splitlines()))
    states = [e for e in held if e.get("ev") == "state"]
    return JobRecord(states[-1] if states else {})


def baseline(s: RayScheduler, app_id: str) -> Any:
    address, sid = s._split(app_id)
    client = s._client(address)
    info = client.get_job_info(sid)
    return describe_response(app_id, info, keep_every_event(client.get_job_logs(sid)), address)


def peak_bytes(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--address", default=None)
    args = parser.parse_args()
    code = f'for i in range({args.lines}):\n    print(f"{{i:08d}} " + "x" * 60)\n'
    with cluster(args.address) as address:
        s = RayScheduler("bench", address=address)
        app_id = s.submit(AppDef("big", [Role("big", "", "python", ["-c", code])]))
        desc = s.wait(app_id, timeout=600)
        assert desc is not None and desc.state == AppState.SUCCEEDED, desc
        size = len(s._client(address).get_job_logs(s._split(app_id)[1]))
        arms: dict[str, Callable[[], Any]] = {
            "baseline (all events kept)": lambda: baseline(s, app_id),
            "torchx describe": lambda: s.describe(app_id),
        }
        times: dict[str, list[float]] = {name: [] for name in arms}
        for _ in range(args.repeats):
            for name, fn in arms.items():
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        print(f"log: {size / 1e6:.1f} MB, {args.lines} lines; load {load_average()}")
        for name, fn in arms.items():
            median = statistics.median(times[name])
            print(f"{name:28s} median {median:.3f} s  peak {peak_bytes(fn) / 1e6:.1f} MB")
        base, ours = (statistics.median(t) for t in times.values())
        print(f"ratio torchx/baseline: {ours / base:.2f}")


if __name__ == "__main__":
    main()
