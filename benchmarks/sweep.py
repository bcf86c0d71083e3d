"""Sweeps: what submitting and describing cost, as ratios against plain tools in the same run.

- ``slurm``: on the test cluster of tests/fixtures/slurm.py (needs .ci/install_slurm.sh),
  in this process: ``Runner.run_sweep`` of a 100-trial grid, everything from the call
  to the handle (the component found and checked, called once per trial, the one array
  script written, ``sbatch`` run, the sweep's record written) against ``subprocess.run``
  of one ``sbatch --array=0-99`` of the script a person would write for the same array
  (the 100 argument values in a bash array, the task's picked by
  ``$SLURM_ARRAY_TASK_ID``; target: at most 1.2x); both submit held, so only submitting
  is timed. Then the Slurm commands one ``sweep_status`` runs, counted through wrappers
  on PATH (target: one ``sacct``).
- ``local``: a 100-trial sweep of ``true`` with ``--parallel 8`` on local_cwd
  (``run_sweep`` + ``wait_sweep``) against ``xargs -P 8`` running ``true`` 100 times
  (target: at most 1.3x).

Each figure is the median of N repeats (default 5), the two sides interleaved so both see
the same machine load.

    uv run python benchmarks/sweep.py [--repeats 5] [--only slurm|local]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

COMPONENT = '''
import torchx.specs as specs


def step(i: int, prog: str = "true") -> specs.AppDef:
    """One trial: runs ``prog``.

    Args:
        i: the trial's number
    """
    return specs.AppDef("step", roles=[specs.Role("s", image=".", entrypoint=prog)])
'''


def _median_pair(
    ours: Callable[[], float], base: Callable[[], float], repeats: int
) -> tuple[float, float]:
    a, b = [], []
    for _ in range(repeats):
        a.append(ours())
        b.append(base())
    return statistics.median(a), statistics.median(b)


def _report(name: str, ours: float, base: float, target: float) -> None:
    ratio = ours / base
    verdict = "within" if ratio <= target else "OVER"
    print(f"{name}: torchx {ours * 1000:.1f} ms, baseline {base * 1000:.1f} ms, "
          f"ratio {ratio:.2f}x ({verdict} the {target}x target)")  # fmt: skip


def bench_slurm(tmp: Path, repeats: int) -> None:
    # the helper beside this benchmark starts the Slurm fixture (this folder is on sys.path)
    from slurm_cluster import slurm_cluster, slurm_missing

    reason = slurm_missing()
    if reason:
        print(f"slurm: skipped ({reason})")
        return
    # Every array task counts against the controller's MaxJobCount, cancelled ones too
    # until its MinJobAge (300 s) purges them: room for the 100-task arrays of both arms.
    min_jobs = 2 * (repeats + 1) * 100 + 1000
    started = slurm_cluster("torchx-slurm-bench-", accounting=True, min_jobs=min_jobs)
    with started as (root, cluster):
        from torchx.runner import Sweep, get_runner
        from torchx.schedulers.slurm_array import cancel_arrays

        runner = get_runner()
        job_dir = root / "jobs"
        job_dir.mkdir()
        cfg = {"job_dir": str(job_dir), "partition": cluster.partition}
        # Held, so the 100 tasks queue but never run: submitting is what is measured.
        cfg["sbatch_args"] = ["--hold"]
        sweep = Sweep.grid(str(tmp / "comp.py") + ":step", {"i": list(range(100))})
        plain = root / "plain.sh"
        values = " ".join(str(i) for i in range(100))
        plain.write_text(
            "#!/bin/bash\n#SBATCH --job-name=plain\n"
            f"values=({values})\n"
            'export TORCHX_SWEEP_INDEX="$SLURM_ARRAY_TASK_ID"\n'
            'srun true --i="${values[$SLURM_ARRAY_TASK_ID]}"\n'
        )
        handles: list[str] = []

        def array_of(handle: str) -> str:
            return (runner.sweep_trial_handle(handle, 0) or "").rsplit("/", 1)[-1].split("_")[0]

        # Each held array is cancelled once timed (outside the timing), the last sweep
        # excepted (its status is counted below), so the pending queue that each submit
        # meets stays the same size through the repeats of both arms.
        def ours() -> float:
            t0 = time.perf_counter()
            handles.append(runner.run_sweep(sweep, "slurm", cfg))
            dt = time.perf_counter() - t0
            if len(handles) > 1:
                cancel_arrays([array_of(handles[-2])])
            return dt

        def base() -> float:
            t0 = time.perf_counter()
            argv = ["sbatch", "--parsable", "--hold", "--array=0-99", f"--chdir={job_dir}"]
            out = subprocess.run([*argv, str(plain)], check=True, capture_output=True, text=True)
            dt = time.perf_counter() - t0
            cancel_arrays([out.stdout.strip().split(";")[0]])
            return dt

        ours(), base()  # warm imports and caches on both sides
        t_ours, t_base = _median_pair(ours, base, repeats)
        _report("slurm: submit a 100-trial sweep vs one plain sbatch --array", t_ours, t_base, 1.2)

        # Accounting learns of a job a moment after sbatch returns (squeue answers until
        # then): count the commands of a status once sacct knows the sweep's array.
        array = array_of(handles[-1])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            known = subprocess.run(
                ["sacct", "-n", "-X", "-P", "-o", "JobID", f"--jobs={array}"],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if known.stdout.strip():
                break
            time.sleep(0.2)
        shims = root / "shims"
        shims.mkdir()
        calls = root / "calls"
        for cmd in ("sacct", "squeue", "scontrol", "sinfo"):
            real = shutil.which(cmd)
            if real:
                (shims / cmd).write_text(f'#!/bin/sh\necho {cmd} >> {calls}\nexec {real} "$@"\n')
                (shims / cmd).chmod(0o755)
        os.environ["PATH"] = f"{shims}:{os.environ['PATH']}"
        st = runner.sweep_status(handles[-1])
        counted = calls.read_text().split() if calls.exists() else []
        print(f"slurm: one status of {len(st.trials)} trials ran {len(counted)} Slurm "
              f"command(s): {', '.join(counted) or 'none'}")  # fmt: skip
        cancel_arrays([array])


def bench_local(tmp: Path, repeats: int) -> None:
    from measure import cpu_seconds, load_average

    from torchx.runner import Sweep, get_runner
    from torchx.specs import AppState

    runner = get_runner()
    sweep = Sweep.grid(str(tmp / "comp.py") + ":step", {"i": list(range(100))}, parallel=8)

    def ours() -> float:
        t0 = time.perf_counter()
        handle = runner.run_sweep(sweep, "local_cwd")
        st = runner.wait_sweep(handle, 0.02)
        dt = time.perf_counter() - t0
        assert st.state == AppState.SUCCEEDED, st.format()
        return dt

    def base() -> float:
        t0 = time.perf_counter()
        subprocess.run(
            ["xargs", "-P", "8", "-n", "1", "true"],
            input="\n".join(map(str, range(100))), text=True, check=True,
        )  # fmt: skip
        return time.perf_counter() - t0

    ours(), base()
    # CPU time too (this process's and its reaped children's: the group, its workers and
    # the trials; xargs and its trues): on a shared machine, other work stretches both
    # arms' wall-clock times alike and so squeezes their ratio; it adds no CPU time.
    cpu: dict[str, list[float]] = {"ours": [], "base": []}

    def counted(side: str, fn: Callable[[], float]) -> Callable[[], float]:
        def go() -> float:
            c0 = cpu_seconds()
            dt = fn()
            cpu[side].append(cpu_seconds() - c0)
            return dt

        return go

    t_ours, t_base = _median_pair(counted("ours", ours), counted("base", base), repeats)
    _report("local: 100 trials of true, --parallel 8, vs xargs -P 8", t_ours, t_base, 1.3)
    c_ours, c_base = statistics.median(cpu["ours"]), statistics.median(cpu["base"])
    load = load_average()
    print(f"local: CPU time (self + children) torchx {c_ours * 1000:.1f} ms, xargs "
          f"{c_base * 1000:.1f} ms, ratio {c_ours / c_base:.2f}x; load average {load}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", choices=("slurm", "local"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_STATE_HOME"] = os.path.join(tmp, "state")
        (Path(tmp) / "comp.py").write_text(COMPONENT)
        if args.only in (None, "local"):
            bench_local(Path(tmp), args.repeats)
        if args.only in (None, "slurm"):
            bench_slurm(Path(tmp), args.repeats)


if __name__ == "__main__":
    main()
