"""First app of the tracking example: computes a result and leaves it in a tracker.

python examples/tracking/app1.py --tracker_base s3://bucket/pipeline/42
python examples/tracking/app2.py --tracker_base s3://bucket/pipeline/42
"""

from __future__ import annotations

import argparse

from torchx.runtime.tracking import FsspecResultTracker


def do_something() -> float:
    """Stands in for training; returns the accuracy reached."""
    correct, total = 233, 1000
    return correct / total


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tracker_base", required=True, help="any fsspec URL or local path")
    args = parser.parse_args()

    accuracy = do_something()
    tracker = FsspecResultTracker(args.tracker_base)
    tracker["app1_out"] = {"accuracy": accuracy}
    print(f"stored accuracy {accuracy} under app1_out in {args.tracker_base}")
