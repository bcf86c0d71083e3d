"""Copy a file or a directory tree between two fsspec URLs, streaming each file.

``python -m torchx.apps.utils.copy_main --src URL --dst URL [--bufsize BYTES]``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from torchx.components._copy import copy


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m torchx.apps.utils.copy_main",
        description="copies a file or directory between fsspec URLs",
    )
    parser.add_argument("--src", type=str, required=True, help="fsspec URL to read")
    parser.add_argument("--dst", type=str, required=True, help="fsspec URL to write")
    # Accepted for 0.7's command lines; files are streamed in fixed chunks here.
    parser.add_argument("--bufsize", type=int, default=64 * 1024, help=argparse.SUPPRESS)
    return parser.parse_args(list(argv))


def main(argv: Sequence[str]) -> None:
    """Copy ``--src`` to ``--dst``; exits 1 with a one-line error when ``--src`` is missing,
    a protocol is unknown or its fsspec extra is not installed."""
    args = parse_args(argv)
    print(f"copying from {args.src} to {args.dst}")
    try:
        count = copy(args.src, args.dst)
    except (FileNotFoundError, ValueError, ImportError) as e:
        print(f"copy_main: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"copied {count} file(s)")


if __name__ == "__main__":
    main(sys.argv[1:])
