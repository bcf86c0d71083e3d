"""Warning-to-running-again of a preempted Slurm job vs a plain ``scontrol requeue``.

Starts the test cluster of tests/fixtures/slurm.py (needs .ci/install_slurm.sh) and submits
one job through the slurm scheduler: an app using torchx.runtime.preemption that records
each start (``started-<attempt>``, with the time) and otherwise waits. Then, interleaved so
both see the same load, on the same job:

- torchx: ``scancel --signal=USR1 --batch JOB`` (what Slurm sends ahead of a time limit):
  the script passes the warning on, the app exits asking for a requeue, the script runs
  ``scontrol requeue``; timed until the app's next start is recorded;
- baseline: ``scontrol requeue JOB``; timed the same way.

Slurm holds every requeued job until a begin time ``cred_expire`` (AuthInfo, 120 s by
default) after the requeue, and sets that time when the job leaves COMPLETING, so a
``scontrol update StartTime=now`` sent before then is overwritten, and one sent from the
batch script never runs (the requeue kills the script). With ``--hold lift`` (the default)
the benchmark plays an operator who lifts the hold as soon as Slurm allows it: in both arms
it repeats ``scontrol update JobId=JOB StartTime=now`` every 0.2 s until the app starts,
so the figure is torchx's own cost. ``--hold keep`` waits the hold out in both arms.

Reports the median of each and their ratio.

    uv run python benchmarks/slurm_requeue.py [--repeats 3] [--hold lift|keep]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slurm_cluster import require_slurm, slurm_cluster

APP = """
import os, sys, time
import torchx.runtime.preemption as preemption
out = sys.argv[1]
with open(os.path.join(out, f"started-{preemption.attempt()}"), "w") as f:
    f.write(repr(time.time()))
while not preemption.preempted():
    time.sleep(0.02)
preemption.requeue()
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hold", choices=("lift", "keep"), default="lift")
    args = parser.parse_args()

    require_slurm()
    with slurm_cluster("torchx-slurm-requeue-", accounting=False) as (root, cluster):
        from torchx.schedulers.slurm_scheduler import SlurmScheduler
        from torchx.specs import AppDef, Role

        marks = root / "marks"
        marks.mkdir()
        (root / "app.py").write_text(APP)
        role = Role(
            "app", image="", entrypoint=sys.executable, args=[str(root / "app.py"), str(marks)]
        )
        sched = SlurmScheduler("bench")
        job = sched.submit(AppDef("requeue", [role]), {"job_dir": str(root / "job")})
        attempt = 0

        lift = ["scontrol", "update", f"JobId={job}", "StartTime=now"]

        def started(n: int, timeout: float = 400) -> float:
            path = marks / f"started-{n}"
            deadline = time.monotonic() + timeout
            next_lift = 0.0
            while not path.exists():
                if time.monotonic() > deadline:
                    raise SystemExit(f"attempt {n} did not start within {timeout}s")
                if n > 0 and args.hold == "lift" and time.monotonic() >= next_lift:
                    # refused while the job still runs or completes; that is expected
                    subprocess.run(lift, env=cluster.env, capture_output=True)
                    next_lift = time.monotonic() + 0.2
                time.sleep(0.02)
            return time.perf_counter()

        def run(cmds: list[list[str]]) -> float:
            nonlocal attempt
            t0 = time.perf_counter()
            for cmd in cmds:
                subprocess.run(cmd, check=True, env=cluster.env, capture_output=True)
            attempt += 1
            return started(attempt) - t0

        started(0)
        torchx_s, plain_s = [], []
        for _ in range(args.repeats):
            torchx_s.append(run([["scancel", "--signal=USR1", "--batch", job]]))
            plain_s.append(run([["scontrol", "requeue", job]]))
        desc = sched.describe(job)
        sched.cancel(job)
        t, p = statistics.median(torchx_s), statistics.median(plain_s)
        print(f"warning -> running again (torchx): {[round(x, 2) for x in torchx_s]} s")
        print(f"scontrol requeue -> running again: {[round(x, 2) for x in plain_s]} s")
        print(f"median {t:.2f}s vs {p:.2f}s: ratio {t / p:.2f} (hold: {args.hold})")
        if desc is not None:
            print(f"status: {desc.num_preemptions} preemption(s), {desc.num_restarts} restart(s)")


if __name__ == "__main__":
    main()
