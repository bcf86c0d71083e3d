"""``torchx log`` as a SubCommand, with pytorch/torchx 0.7's log helpers."""

from __future__ import annotations

import argparse
import logging
import queue
import re
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from torchx.cli.cmd_base import SubCommand
from torchx.cli.colors import ENDC, GREEN
from torchx.runner import get_runner

if TYPE_CHECKING:
    from torchx.runner import Runner
    from torchx.schedulers import Stream
    from torchx.specs import AppDef

log: logging.Logger = logging.getLogger(__name__)

ID_FORMAT = "SCHEDULER://[SESSION_NAME]/APP_ID/[ROLE_NAME/[REPLICA_IDS,...]]"
_ID = re.compile(r"^\w+://[^/]*/[^/]+(/[^/]+(/(\d+,?)+)?)?$")
# How often get_logs asks whether the app has started, before its logs can be read.
_START_POLL_S = 1.0


def validate(job_identifier: str) -> None:
    """Exit with code 1 and a one-line error unless ``job_identifier`` has the form
    ``ID_FORMAT``."""
    if not _ID.match(job_identifier):
        print(
            f"torchx: error: log target: got {job_identifier!r}; expected {ID_FORMAT}",
            file=sys.stderr,
        )
        sys.exit(1)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _prefixed(prefix: str, line: str) -> str:
    # Carriage returns (progress bars) and embedded newlines each start a new visual line;
    # "\r\n" (a Windows-style line end) is one break, so a log redirected to a file gets
    # no stray prefix after its "\r". The line's own characters are kept as they are.
    end = "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""
    body = _LINE_BREAK.sub(lambda m: m.group() + prefix, line[: len(line) - len(end)])
    return (body if body.startswith("\r") else prefix + body) + end


def print_log_lines(
    file: TextIO,
    runner: Runner,
    app_handle: str,
    role_name: str,
    replica_id: int,
    regex: str | None,
    should_tail: bool,
    exceptions: queue.Queue[Exception],
    streams: Stream | None,
) -> None:
    """Print replica ``replica_id`` of ``role_name``'s lines to ``file``, each prefixed
    ``role/replica``; an error is put on ``exceptions`` and raised."""
    try:
        prefix = f"{GREEN}{role_name}/{replica_id}{ENDC} "
        for line in runner.log_lines(
            app_handle, role_name, replica_id, regex, should_tail=should_tail, streams=streams
        ):
            print(_prefixed(prefix, line), file=file, end="", flush=True)
    except Exception as e:
        exceptions.put(e)
        raise


def find_role_replicas(app: AppDef, role_name: str | None) -> list[tuple[str, int]]:
    """``(role, replica)`` for every replica of ``role_name`` (of every role when None)."""
    return [
        (role.name, k)
        for role in app.roles
        if role_name is None or role.name == role_name
        for k in range(role.num_replicas)
    ]


def get_logs(
    file: TextIO,
    identifier: str,
    regex: str | None,
    should_tail: bool = False,
    runner: Runner | None = None,
    streams: Stream | None = None,
) -> None:
    """Print the logs ``identifier`` names (``ID_FORMAT``: an app, a role, or replicas
    ``0,2`` of a role) to ``file``, waiting for the app to start first. The first error
    of any replica is raised once all are done."""
    from torchx.specs import is_started, make_app_handle

    validate(identifier)
    backend, _, path = identifier.partition("://")
    parts = path.split("/")
    session, app_id = parts[0] or "default", parts[1]
    role_name = parts[2] if len(parts) > 2 else None
    if runner is None:
        runner = get_runner()
    handle = make_app_handle(backend, session, app_id)
    if len(parts) == 4 and role_name is not None:
        targets = [(role_name, int(k)) for k in parts[3].split(",") if k]
    else:
        said = False
        while True:
            status = runner.status(handle)
            if status is None:
                raise ValueError(f"app handle: got {handle!r}; no such app on its scheduler")
            if is_started(status.state):
                break
            if not said:
                log.info("Waiting for %s to start before reading its logs...", handle)
                said = True
            time.sleep(_START_POLL_S)
        app = runner.describe(handle)
        if app is None:
            raise ValueError(f"app handle: got {handle!r}; no such app on its scheduler")
        targets = find_role_replicas(app, role_name)
        if not targets:
            roles = ", ".join(r.name for r in app.roles)
            print(
                f"torchx: error: log target role: got {role_name!r}; the app's roles are {roles}",
                file=sys.stderr,
            )
            sys.exit(1)
    errors: queue.Queue[Exception] = queue.Queue()
    threads = [
        threading.Thread(
            target=print_log_lines,
            args=(file, runner, handle, role, k, regex, should_tail, errors, streams),
            daemon=True,
        )
        for role, k in targets
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not errors.empty():
        raise errors.get()


class CmdLog(SubCommand):
    """Print an app's logs: ``torchx log [--regex R] [-t] [--streams S] IDENTIFIER``."""

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("--regex", type=str, help="only lines matching this regex")
        subparser.add_argument(
            "-t", "--tail", action="store_true", default=False, help="follow until the app ends"
        )
        subparser.add_argument(
            "--streams",
            type=str,
            choices=["stdout", "stderr", "combined"],
            help="which output of the replicas",
        )
        subparser.add_argument("identifier", type=str, metavar=ID_FORMAT, help="what to print")

    def run(self, args: argparse.Namespace) -> None:
        from torchx.schedulers import Stream

        streams = Stream(args.streams) if getattr(args, "streams", None) else None
        get_logs(sys.stdout, args.identifier, args.regex, args.tail, streams=streams)


__all__ = [
    "ENDC",
    "GREEN",
    "ID_FORMAT",
    "CmdLog",
    "find_role_replicas",
    "get_logs",
    "print_log_lines",
    "validate",
]
