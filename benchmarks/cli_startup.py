"""Wall time of the ``torchx`` command against ``python -c pass``, in one run.

    uv run python benchmarks/cli_startup.py [--runs 15]

Times, alternately so that all see the same machine load and a warm file cache:

- ``python -c pass`` (the baseline: interpreter start-up);
- ``torchx --help``;
- ``torchx run --dryrun utils.echo``;
- ``torchx run utils.echo`` on the local scheduler (submit, wait, print the log line);
- ``torchx list`` (its default view) over 20 local app records and over 2,000, whose ratio
  says whether listing grows with the number of records (it should not: the default view
  reads only the newest few).

Each is reported as a median and as a ratio to the baseline. The reference peer (torchx
0.7.0, argparse) measured about 170, 300 and 490 ms for the three commands on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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


def _records(state: str, template: str, count: int) -> None:
    """``count`` local app records in ``state``, copies of the finished app ``template``
    (a directory written by the local scheduler), each under its own app id."""
    index = Path(state, "torchx", "local_cwd", "apps")
    logs = Path(state, "torchx", "local_cwd", "logs", "torchx")  # <log_dir>/<session>
    index.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        app_id = f"bench-{i:05d}"
        app_dir = logs / app_id
        shutil.copytree(template, app_dir, symlinks=True)
        request = app_dir / ".torchx" / "request.json"
        data = json.loads(request.read_text())
        data.update(app_id=app_id, app_dir=str(app_dir))
        request.write_text(json.dumps(data))
        (index / app_id).symlink_to(app_dir)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs

    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "--help": [TORCHX, "--help"],
        "run --dryrun utils.echo": [TORCHX, "run", "--dryrun", "utils.echo"],
        "run utils.echo": [TORCHX, "run", "utils.echo"],
        "list (20 records)": [TORCHX, "list"],
        "list (2000 records)": [TORCHX, "list"],
    }
    with tempfile.TemporaryDirectory() as scratch:
        # Scratch local-scheduler states, so the benchmark leaves no apps behind. Bytecode
        # caching is forced on: an installed package has its .pyc files, and without them
        # every run would time the compiler instead of the command.
        env = {**os.environ, "XDG_STATE_HOME": os.path.join(scratch, "run")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(cases["run utils.echo"], check=True, env=env, capture_output=True)
        (template,) = Path(scratch, "run", "torchx", "local_cwd", "logs", "torchx").iterdir()
        envs = {name: env for name in cases}
        for name, count in (("list (20 records)", 20), ("list (2000 records)", 2000)):
            state = os.path.join(scratch, f"records{count}")
            _records(state, str(template), count)
            envs[name] = {**env, "XDG_STATE_HOME": state}
        for name, argv in cases.items():  # warm the file cache and the bytecode
            _time(argv, envs[name])
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, argv in cases.items():
                times[name].append(_time(argv, envs[name]))

    base = statistics.median(times["python -c pass"])
    print(f"{'command':28} {'median':>9} {'ratio':>7}   (runs={runs})")
    for name, samples in times.items():
        med = statistics.median(samples)
        line = f"{name:28} {med * 1000:7.1f}ms {med / base:6.1f}x"
        if name in PEER_MS:
            line += f"   peer {PEER_MS[name]:.0f} ms"
        print(line)
    few, many = (statistics.median(times[f"list ({n} records)"]) for n in (20, 2000))
    print(f"list with 2000 records / with 20: {many / few:.2f}x (target: at most 1.5x)")


if __name__ == "__main__":
    main()
