"""Entry point of the ``torchx`` command.

The command itself lands with the components/CLI work; until then it says so plainly
instead of failing with an import error.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    del argv
    print(
        "torchx: the CLI is not built yet; use the Python API (torchx.specs) for now.",
        file=sys.stderr,
    )
    return 1


def run() -> None:
    """Console-script wrapper: exit with main()'s return code."""
    sys.exit(main(sys.argv[1:]))


if __name__ == "__main__":
    run()
