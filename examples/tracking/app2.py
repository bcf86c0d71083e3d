"""Second app of the tracking example: reads what app1.py left in the tracker.

Run it with the same --tracker_base as app1.py; no file paths are passed between them.
"""

from __future__ import annotations

import argparse

from torchx.runtime.tracking import FsspecResultTracker, Results


def do_something_else(app1_out: Results) -> None:
    """Stands in for the next stage, which starts from app1's accuracy."""
    print(f"app1 reached accuracy {app1_out['accuracy']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tracker_base", required=True, help="any fsspec URL or local path")
    args = parser.parse_args()

    tracker = FsspecResultTracker(args.tracker_base)
    app1_accuracy = tracker["app1_out"]
    do_something_else(app1_accuracy)
