"""Python functions as torchx apps: sum a range in shards, one app per shard.

    uv run python examples/function/shard_sum.py --shards 4 --n 1000

Each shard runs as its own app on the scheduler (local_cwd by default; any other with
--scheduler and --cfg); the values come back to this process, and so does an exception.
"""

from __future__ import annotations

import argparse

from torchx.runner import Executor


def shard_sum(shard: int, num_shards: int, n: int) -> int:
    """The sum of the numbers below ``n`` that shard ``shard`` of ``num_shards`` owns."""
    return sum(range(shard, n, num_shards))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", default="local_cwd")
    parser.add_argument("--cfg", default="", help="run options, k1=v1,k2=v2")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    cfg = dict(kv.split("=", 1) for kv in args.cfg.split(",") if kv)

    with Executor(scheduler=args.scheduler, cfg=cfg, max_in_flight=2) as ex:
        shards = range(args.shards)
        parts = list(ex.map(shard_sum, shards, [args.shards] * args.shards, [args.n] * args.shards))
        print(f"sum of range({args.n}) from {args.shards} apps: {sum(parts)}")

        future = ex.submit(shard_sum, 0, 0, args.n)  # a step of 0: range() refuses it
        print(f"submitted {future.handle}")
        try:
            future.result()
        except ValueError as e:
            print(f"the app raised ValueError: {e}")


if __name__ == "__main__":
    main()
