"""Throughput of put+get through FsspecResultTracker vs raw fsspec JSON on the same filesystem.

    uv run python benchmarks/tracking_put_get.py [--seconds 0.1] [--rounds 40]

One operation is a put of a small results dict followed by a get of the same key. The
baselines do the same JSON write and read with fsspec directly, in two common idioms:
``fs.open`` + ``json.dump``/``json.load``, and ``fs.pipe_file``/``fs.cat_file``. The
tracker also checks the key and values, writes atomically and parses strictly; the
ratio shows what that costs (target: at least 0.8x of the faster baseline). Short
timed slices alternate between contenders so that machine load affects each alike;
the median slice rate counts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable

import fsspec

from torchx.runtime.tracking import FsspecResultTracker

RESULTS = {"accuracy": 0.233, "loss": 1.4142, "epoch": 10, "l2norm/mean": 1.2, "model": "resnet"}
KEYS = 64  # cycle over a few keys so that both overwrite and read existing documents


def tracker_op(base: str) -> Callable[[int], None]:
    tracker = FsspecResultTracker(base)

    def op(i: int) -> None:
        key = f"trial_{i % KEYS}"
        tracker[key] = RESULTS
        assert tracker[key]["epoch"] == 10

    return op


def open_json_op(base: str) -> Callable[[int], None]:
    fs, root = fsspec.core.url_to_fs(base)
    fs.makedirs(root, exist_ok=True)

    def op(i: int) -> None:
        path = f"{root}/trial_{i % KEYS}.json"
        with fs.open(path, "w") as f:
            json.dump(RESULTS, f)
        with fs.open(path, "r") as f:
            assert json.load(f)["epoch"] == 10

    return op


def pipe_cat_op(base: str) -> Callable[[int], None]:
    fs, root = fsspec.core.url_to_fs(base)
    fs.makedirs(root, exist_ok=True)

    def op(i: int) -> None:
        path = f"{root}/trial_{i % KEYS}.json"
        fs.pipe_file(path, json.dumps(RESULTS).encode())
        assert json.loads(fs.cat_file(path))["epoch"] == 10

    return op


def run_for(op: Callable[[int], None], seconds: float, start_at: int) -> tuple[int, float]:
    """Operations done and seconds taken, running ``op`` for about ``seconds``."""
    done, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(20):
            op(start_at + done)
            done += 1
        now = time.perf_counter()
        if now >= deadline:
            return done, now - start


def bench_filesystem(
    label: str, base_of: Callable[[str], str], seconds: float, rounds: int
) -> float:
    contenders = {
        "tracker": tracker_op,
        "raw fs.open + json": open_json_op,
        "raw pipe_file/cat_file": pipe_cat_op,
    }
    ops = {name: make(base_of(name)) for name, make in contenders.items()}
    for op in ops.values():  # warm up and create every document once
        for i in range(KEYS):
            op(i)
    # Many short slices, taken in turn, so that load from elsewhere on the machine
    # lands on every contender alike; the median slice rate is reported.
    rates: dict[str, list[float]] = {name: [] for name in ops}
    done_so_far = dict.fromkeys(ops, 0)
    for _ in range(rounds):
        for name, op in ops.items():
            done, took = run_for(op, seconds, done_so_far[name])
            done_so_far[name] += done
            rates[name].append(done / took)
    median = {name: statistics.median(values) for name, values in rates.items()}
    best_raw = max(v for name, v in median.items() if name != "tracker")
    print(f"\n{label}")
    for name, value in median.items():
        print(f"  {name:<24} {value:>10,.0f} put+get/s")
    ratio = median["tracker"] / best_raw
    verdict = "meets" if ratio >= 0.8 else "BELOW"
    print(f"  ratio tracker / faster raw baseline: {ratio:.2f}x ({verdict} the 0.8x target)")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.1, help="length of one timed slice")
    parser.add_argument("--rounds", type=int, default=40, help="slices per contender")
    parser.add_argument("--local-dir", default=None, help="where the local files go (a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.local_dir) as tmp:
        local = bench_filesystem(
            f"local disk ({tmp})",
            lambda name: f"{tmp}/{uuid.uuid4().hex}",
            args.seconds,
            args.rounds,
        )
    memory = bench_filesystem(
        "memory://",
        lambda name: f"memory://bench-{uuid.uuid4().hex}",
        args.seconds,
        args.rounds,
    )
    print(f"\nsummary: tracker / raw fsspec = {local:.2f}x local, {memory:.2f}x memory")


if __name__ == "__main__":
    main()
