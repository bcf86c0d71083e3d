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
the benchmark plays an operator who lifts the hold as soon as it safely can: in both arms,
once ``scontrol show job`` says PENDING and 2 s more have passed (slurmd refuses a launch of
the job id dated no later than its kill), it sends ``scontrol update JobId=JOB
StartTime=now``, so the figure is torchx's own cost. ``--hold keep`` waits the hold out in
both arms, as an unattended cluster does.

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


# Seconds the operator waits, once the job is PENDING, before lifting its begin time.
LIFT_AFTER_S = 2.0


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

        show = ["scontrol", "show", "job", "-o", job]

        def started(n: int, timeout: float = 400) -> float:
            path = marks / f"started-{n}"
            deadline = time.monotonic() + timeout
            pending_since = None
            while not path.exists():
                if time.monotonic() > deadline:
                    raise SystemExit(f"attempt {n} did not start within {timeout}s")
                if n > 0 and args.hold == "lift":
                    state = subprocess.run(show, env=cluster.env, capture_output=True, text=True)
                    if "JobState=PENDING" in state.stdout:
                        pending_since = pending_since or time.monotonic()
                        # slurmd refuses a launch dated no later than the job's kill
                        if time.monotonic() - pending_since >= LIFT_AFTER_S:
                            subprocess.run(lift, env=cluster.env, capture_output=True)
                time.sleep(0.1)
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
