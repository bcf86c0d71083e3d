"""Writes the trainer's synthetic data set to any fsspec URL.

python examples/train/make_data.py --out /tmp/data.pt --rows 2048
"""

from __future__ import annotations

import argparse

from trainer import make_dataset, write_torch

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="where to write it (any fsspec URL)")
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args()
    if ns.rows < 10:
        parser.error(f"--rows: got {ns.rows}; expected 10 or more")
    write_torch(ns.out, make_dataset(ns.rows, ns.seed))
    print(f"wrote {ns.rows} rows to {ns.out}")
