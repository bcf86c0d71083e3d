"""Run a command until it exits, a timeout passes, or a stop file appears.

``python -m torchx.components._supervise [--timeout S] [--start_on_file F]
[--exit_on_file F] [--announce TEXT] -- COMMAND ...`` (the program behind
``metrics.tensorboard``). ``--announce`` is printed on stdout when the command starts,
``{host}`` replaced by this machine's name: that is how a server tells the user its URL
in the app's log, where ``torchx run`` and ``torchx log`` show it.
Paths are fsspec URLs, so the stop file can live on a shared store. Stopping by timeout or
file is a success (exit 0): the command was meant to run only that long.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence

_POLL_S = 0.5


def _exists(url: str) -> bool:
    from fsspec.core import url_to_fs  # type: ignore[import-untyped]

    fs, path = url_to_fs(url)
    return bool(fs.exists(path))


def supervise(
    command: Sequence[str],
    timeout: float,
    start_on_file: str = "",
    exit_on_file: str = "",
    poll_s: float = _POLL_S,
    announce: str = "",
) -> int:
    """Run ``command`` under the rules above; returns the exit code to report."""
    deadline = time.monotonic() + timeout
    while start_on_file and not _exists(start_on_file):
        if time.monotonic() >= deadline:
            print(f"supervise: {start_on_file} never appeared", file=sys.stderr)
            return 0
        time.sleep(poll_s)
    proc = subprocess.Popen(list(command))
    if announce:
        import socket

        print(announce.replace("{host}", socket.gethostname()), flush=True)
    try:
        while True:
            try:
                return proc.wait(timeout=poll_s)
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() >= deadline:
                print(f"supervise: timeout of {timeout}s reached, stopping", file=sys.stderr)
                break
            if exit_on_file and _exists(exit_on_file):
                print(f"supervise: {exit_on_file} appeared, stopping", file=sys.stderr)
                break
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchx.components._supervise")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--start_on_file", default="")
    parser.add_argument("--exit_on_file", default="")
    parser.add_argument("--announce", default="", help="printed when the command starts")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    command = ns.command[1:] if ns.command[:1] == ["--"] else ns.command
    if not command:
        parser.error("give the command to run after --")
    try:
        return supervise(
            command, ns.timeout, ns.start_on_file, ns.exit_on_file, announce=ns.announce
        )
    except FileNotFoundError as e:
        print(f"supervise: cannot run {command[0]!r}: {e}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main())
