"""Run a program, optionally only once a file appears, and stop it after a timeout or when
another file appears.

``python -m torchx.apps.utils.process_monitor [--timeout S] [--start_on_file URL]
[--exit_on_file URL] [--poll_rate S] [--kill_timeout S] PROGRAM [ARGS...]``

Files are fsspec URLs, so they may live on a shared store. The exit code is the program's;
a timeout reached before the program started is ``TIMEOUT_EXIT_CODE``. A stopped program
gets SIGTERM, then SIGKILL after ``--kill_timeout`` seconds.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence

TIMEOUT_EXIT_CODE = 34


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m torchx.apps.utils.process_monitor",
        description="runs a program until it exits, a timeout passes or a file appears",
    )
    parser.add_argument("--timeout", type=float, help="seconds before the program is stopped")
    parser.add_argument("--start_on_file", type=str, help="start once this fsspec URL exists")
    parser.add_argument("--exit_on_file", type=str, help="stop once this fsspec URL exists")
    parser.add_argument("--poll_rate", type=float, default=5, help="seconds between checks")
    parser.add_argument(
        "--kill_timeout", type=float, default=60, help="seconds from SIGTERM to SIGKILL"
    )
    parser.add_argument("entrypoint", type=str, help="the program")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return parser.parse_args(list(argv))


def _exists(url: str) -> bool:
    from fsspec.core import url_to_fs  # type: ignore[import-untyped]

    fs, path = url_to_fs(url)
    return bool(fs.exists(path))


def main(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    start = time.monotonic()

    def timed_out() -> bool:
        return args.timeout is not None and time.monotonic() - start > args.timeout

    if args.start_on_file:
        while not _exists(args.start_on_file):
            if timed_out():
                print("reached the timeout before the program started")
                sys.exit(TIMEOUT_EXIT_CODE)
            time.sleep(args.poll_rate)
        print(f"{args.start_on_file} exists, starting the program")
    proc = subprocess.Popen([args.entrypoint, *args.args])
    print(f"started process {proc.pid}")
    while True:
        try:
            proc.wait(args.poll_rate)
            print(f"process exited with exit code {proc.returncode}")
            sys.exit(proc.returncode)
        except subprocess.TimeoutExpired:
            if timed_out():
                print("reached the timeout, stopping the program")
                break
            if args.exit_on_file and _exists(args.exit_on_file):
                print(f"{args.exit_on_file} exists, stopping the program")
                break
    proc.terminate()
    try:
        proc.wait(args.kill_timeout)
    except subprocess.TimeoutExpired:
        print("the program outlived --kill_timeout, killing it")
        proc.kill()
        proc.wait()
    print(f"process exited with exit code {proc.returncode}")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main(sys.argv[1:])
