"""Evaluate the Booth function at (x1, x2) and record it with a result tracker.

``python -m torchx.apps.utils.booth_main --x1 X --x2 Y [--trial_idx N] [--tracker_base URL]``
stores ``{"booth_eval": value}`` under key ``trial_idx`` of the ``FsspecResultTracker`` at
``tracker_base``. Needs ``torchx-tracking`` installed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m torchx.apps.utils.booth_main",
        description="evaluates the booth function at (x1, x2)",
    )
    for coordinate in ("x1", "x2"):
        parser.add_argument(f"--{coordinate}", type=float, required=True, help=coordinate)
    parser.add_argument(
        "--tracker_base",
        type=str,
        default="/tmp/torchx-utils-booth",
        help="fsspec URL of the result tracker's base folder",
    )
    parser.add_argument("--trial_idx", type=int, default=0, help="the trial's key")
    return parser.parse_args(list(argv))


def main(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    value = (args.x1 + 2 * args.x2 - 7) ** 2 + (2 * args.x1 + args.x2 - 5) ** 2
    try:
        from torchx.runtime.tracking import FsspecResultTracker
    except ImportError:
        print(
            "booth_main: recording the result needs torchx-tracking: pip install torchx-tracking",
            file=sys.stderr,
        )
        sys.exit(1)
    FsspecResultTracker(args.tracker_base)[args.trial_idx] = {"booth_eval": value}
    print(f"booth({args.x1}, {args.x2}) = {value}")


if __name__ == "__main__":
    main(sys.argv[1:])
