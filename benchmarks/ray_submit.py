"""Submit-to-finish of an echo on a real local Ray cluster: torchx's ray scheduler vs Ray alone.

1. torchx: ``RayScheduler.submit`` of a one-replica ``echo hello`` app, then ``wait`` until it
   ends (one replica: the direct path, ``_ray_direct`` runs the command with no Ray import,
   its CPU reserved through ``entrypoint_num_cpus``).
2. baseline: ``JobSubmissionClient.submit_job(entrypoint="echo hello")``, then polling
   ``get_job_status`` at the same interval until it ends.

Both go through the same head node, started here on 127.0.0.1 (as the tests start it);
``--address`` uses a running cluster instead. The two are measured interleaved so they see
the same machine load; each figure is the median of N repeats. Target ratio: at most 1.2x.

Usage: uv run python benchmarks/ray_submit.py [--repeats N] [--address http://HOST:PORT]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fixture_modules import fixture_module

from torchx.schedulers.ray_scheduler import POLL_INTERVAL_S, RayScheduler
from torchx.specs import AppDef, AppState, Role


@contextlib.contextmanager
def cluster(address: str | None) -> Iterator[str]:
    if address:
        yield address
        return
    module = fixture_module("ray")
    with (
        tempfile.TemporaryDirectory(prefix="ray-bench-") as tmp,
        module.start_head(Path(tmp)) as head,
    ):
        yield head.address


def torchx_echo(s: RayScheduler) -> float:
    t0 = time.perf_counter()
    app_id = s.submit(AppDef("echo", [Role("echo", "", "echo", ["hello"])]))
    desc = s.wait(app_id, timeout=300)
    elapsed = time.perf_counter() - t0
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    return elapsed


def direct_echo(client: Any) -> float:
    t0 = time.perf_counter()
    sid = client.submit_job(entrypoint="echo hello")
    while not client.get_job_status(sid).is_terminal():
        time.sleep(POLL_INTERVAL_S)
    elapsed = time.perf_counter() - t0
    assert str(client.get_job_status(sid).value) == "SUCCEEDED"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--address", default=None, help="a running cluster's dashboard")
    args = parser.parse_args()
    from ray.job_submission import JobSubmissionClient

    with cluster(args.address) as address:
        s = RayScheduler("bench", address=address)
        client = JobSubmissionClient(address)
        # The first job on a fresh cluster pays for worker start-up; not what is measured.
        direct_echo(client)
        torchx_echo(s)
        ours, base = [], []
        for _ in range(args.repeats):
            base.append(direct_echo(client))
            ours.append(torchx_echo(s))
        t, b = statistics.median(ours), statistics.median(base)
        print(f"cluster: {address}, repeats: {args.repeats}", file=sys.stderr)
        print(f"JobSubmissionClient echo, submit to finish: {b * 1000:8.0f} ms (median)")
        print(f"torchx ray scheduler echo, submit to finish: {t * 1000:7.0f} ms (median)")
        print(f"ratio torchx / direct: {t / b:.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
