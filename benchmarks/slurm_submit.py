"""Submit-to-finish of an echo through the slurm scheduler vs plain ``sbatch --wait``.

Starts the test cluster of tests/fixtures/slurm.py (needs .ci/install_slurm.sh), then, with
the two interleaved so both see the same load:

- torchx: ``SlurmScheduler.submit`` + ``wait`` of a one-role app running ``echo hi``;
- baseline: ``sbatch --wait`` of a script that runs ``srun echo hi``.

Reports the median of each and their ratio (target: at most 1.2x).

    uv run python benchmarks/slurm_submit.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from slurm_cluster import require_slurm, slurm_cluster


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    require_slurm()
    with slurm_cluster("torchx-slurm-bench-", accounting=True) as (root, cluster):
        from torchx.schedulers.slurm_scheduler import SlurmScheduler
        from torchx.specs import AppDef, AppState, Role

        sched = SlurmScheduler("bench")
        app = AppDef("echo", [Role("echo", image="", entrypoint="echo", args=["hi"])])
        job_dir = root / "jobs"
        script = root / "plain.sh"
        script.write_text("#!/bin/bash\n#SBATCH --job-name=plain\nsrun echo hi\n")

        def torchx_once() -> float:
            t0 = time.perf_counter()
            app_id = sched.submit(app, {"job_dir": str(job_dir)})
            desc = sched.wait(app_id, timeout=120)
            dt = time.perf_counter() - t0
            assert desc is not None and desc.state == AppState.SUCCEEDED, desc
            return dt

        def sbatch_once() -> float:
            t0 = time.perf_counter()
            subprocess.run(
                ["sbatch", "--wait", "--quiet", f"--chdir={job_dir}", str(script)],
                check=True,
                env=cluster.env,
            )
            return time.perf_counter() - t0

        torchx_once()  # warm caches and imports for both paths
        sbatch_once()
        tx, sb = [], []
        for _ in range(args.repeats):
            tx.append(torchx_once())
            sb.append(sbatch_once())
        t, s = statistics.median(tx), statistics.median(sb)
        print(f"torchx submit+wait : median {t:.3f}s  ({', '.join(f'{x:.2f}' for x in tx)})")
        print(f"sbatch --wait      : median {s:.3f}s  ({', '.join(f'{x:.2f}' for x in sb)})")
        print(f"ratio torchx/sbatch: {t / s:.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
