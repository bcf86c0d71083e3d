"""``HANDLE[/role[/replica]]`` parsing and concurrent log printing."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, TextIO

from torchx.cli._errors import CliError

if TYPE_CHECKING:
    from torchx.runner import Runner
    from torchx.schedulers import Stream
    from torchx.specs import AppDef, AppStatus


def split_log_target(target: str) -> tuple[str, str | None, int | None]:
    """``sched://session/app_id[/role[/replica]]`` -> (handle, role, replica)."""
    from torchx.specs import SpecsError, parse_app_handle

    try:
        parsed = parse_app_handle(target)
    except SpecsError as e:
        from torchx.cli._handle_hint import bad_handle

        raise bad_handle(target, e) from None
    app_id, *rest = parsed.app_id.split("/")
    if len(rest) > 2 or not app_id or any(not p for p in rest):
        if rest and not rest[-1] and len(rest) <= 3 and app_id and all(rest[:-1]):
            from torchx.cli._handle_hint import trailing_slash

            raise trailing_slash(target, "log target")
        raise CliError(
            f"log target: got {target!r}; expected SCHEDULER://SESSION/APP_ID[/ROLE[/REPLICA]]"
        )
    replica: int | None = None
    if len(rest) == 2:
        if not rest[1].isdigit():
            raise CliError(f"log target replica: got {rest[1]!r}; expected a number such as 0")
        replica = int(rest[1])
    handle = f"{parsed.scheduler_backend}://{parsed.session_name}/{app_id}"
    return handle, (rest[0] if rest else None), replica


def replicas_of(
    app: AppDef, role: str | None = None, replica: int | None = None
) -> list[tuple[str, int]]:
    """The (role, replica) pairs to print, checked against the app's roles."""
    names = [r.name for r in app.roles]
    if role is not None and role not in names:
        raise CliError(f"log target role: got {role!r}; the app's roles are {', '.join(names)}")
    out: list[tuple[str, int]] = []
    for r in app.roles:
        if role is not None and r.name != role:
            continue
        if replica is not None and not 0 <= replica < r.num_replicas:
            raise CliError(
                f"log target replica: got {replica}; role {r.name} has replicas "
                f"0..{r.num_replicas - 1}"
            )
        ids = [replica] if replica is not None else list(range(r.num_replicas))
        out += [(r.name, k) for k in ids]
    return out


# The longest pause between two status polls while waiting for an app to start (0.7 polled
# once a second).
_MAX_START_POLL_S = 1.0


def wait_until_started(
    runner: Runner, handle: str, status: AppStatus | None, target: str
) -> AppStatus | None:
    """Poll ``handle``'s status until the app has started (RUNNING, or it ended, also
    without starting) or is gone, as pytorch/torchx 0.7's ``torchx log`` did before printing
    an app's or a role's log; says once on stderr that it waits. Returns the last status.
    Ctrl-C stops the wait (the CLI exits 130)."""
    import time

    from torchx.specs import is_started

    pause = 0.1
    if status is not None and not is_started(status.state):
        print(
            f"torchx: {handle} is {status.state.name}: waiting for it to start to print the log "
            f"of {target} (Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )
    while status is not None and not is_started(status.state):
        time.sleep(pause)
        pause = min(pause * 2, _MAX_START_POLL_S)
        status = runner.status(handle)
    return status


def _stream(name: str | None) -> Stream | None:
    from torchx.schedulers import Stream

    if name is None:
        return None
    try:
        return Stream(name)
    except ValueError:
        known = ", ".join(s.value for s in Stream)
        raise CliError(f"--streams: got {name!r}; expected one of {known}") from None


# The line the local scheduler writes before a restarted replica's new attempt
# ("[torchx] attempt 2 of trainer/0 starts: ...").
_ATTEMPT_MARKER = re.compile(r"^\[torchx\] attempt (\d+) of ")


def print_logs(
    runner: Runner,
    handle: str,
    targets: list[tuple[str, int]],
    *,
    regex: str | None = None,
    tail: bool = False,
    streams: str | None = None,
    out: TextIO | None = None,
    since: datetime | None = None,
    timestamps: bool = False,
    attempts: dict[tuple[str, int], int] | None = None,
    fold_launcher: bool = False,
    only_attempt: int | None = None,
) -> None:
    """Print the log lines of every target to ``out`` (stdout), one thread each.

    Each line starts with ``role/replica``, and with ``#attempt`` once the replica has been
    started more than once (``attempts`` says how often, as the status knows it; a marker
    line in the log says so while it is followed). ``timestamps`` adds the time each line
    was written, where the scheduler keeps it. ``fold_launcher`` leaves out torchrun's own
    traceback of ``ChildFailedError`` (the workers' tracebacks and its summary stay).
    ``only_attempt`` keeps the lines of that attempt (1 is the first run), its marker line
    included.
    """
    stream_out = out if out is not None else sys.stdout
    lock = threading.Lock()
    errors: list[BaseException] = []
    known = attempts or {}

    def pump(role: str, k: int) -> None:
        try:
            attempt = 1
            show_attempt = known.get((role, k), 1) > 1
            timed: Iterable[tuple[datetime | None, str]]
            if timestamps:
                timed = runner.log_lines_timed(
                    handle, role, k, since=since, should_tail=tail, streams=_stream(streams)
                )
            else:
                plain = runner.log_lines(
                    handle, role, k, since=since, should_tail=tail, streams=_stream(streams)
                )
                timed = ((None, line) for line in plain)
            if fold_launcher:
                timed = fold_launcher_tracebacks(timed)
            pattern = re.compile(regex) if regex is not None else None
            for when, line in timed:
                marker = _ATTEMPT_MARKER.match(line)
                if marker:
                    attempt = int(marker.group(1))
                    show_attempt = True
                if only_attempt is not None and attempt != only_attempt:
                    continue
                if pattern is not None and not pattern.search(line):
                    continue
                text = line if line.endswith("\n") else line + "\n"
                prefix = f"{role}/{k}#{attempt}" if show_attempt else f"{role}/{k}"
                if timestamps:
                    prefix += " " + (when.isoformat(timespec="milliseconds") if when else "-")
                with lock:
                    stream_out.write(f"{prefix} {text}")
                    if tail:
                        # followed lines are shown as they come; the rest are written in
                        # buffered blocks (a flush a line costs a write call a line)
                        stream_out.flush()
        except BaseException as e:  # reported once every thread is done
            errors.append(e)

    threads = [threading.Thread(target=pump, args=t, daemon=True) for t in targets]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
    finally:
        # the log comes before what follows it on stderr (--exit-code's status, an error
        # line), also where both streams go to one pipe
        stream_out.flush()


def attempts_of(status: AppStatus | None) -> dict[tuple[str, int], int]:
    """How often each replica was started, as ``status`` says."""
    if status is None:
        return {}
    return {(r.role, r.id): r.attempt for role in status.roles for r in role.replicas}


def check_attempt(
    attempt: int | None,
    status: AppStatus | None,
    targets: list[tuple[str, int]],
    handle: str,
    follow: bool,
) -> None:
    """Refuse, in one line, an ``--attempt`` past the last one the target replicas have
    had (it would print nothing, as an empty attempt does). Following a running app, a
    later attempt may still start: it is waited for."""
    from torchx.specs import is_terminal

    if attempt is None or status is None or (follow and not is_terminal(status.state)):
        return
    known = attempts_of(status)
    had = max((known.get(t, 0) for t in targets), default=0)
    if had and attempt > had:
        which = "only attempt 1" if had == 1 else f"attempts 1 to {had}"
        raise CliError(f"--attempt: got {attempt}; {handle} has had {which}")


# torchrun's traceback of its own ``ChildFailedError`` says nothing the workers' tracebacks
# and its failure summary do not: ``torchx run`` leaves it out (``torchx log`` keeps it).
_LAUNCHER_ERROR = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
# A traceback longer than this is printed as it is: holding lines is bounded.
_MAX_FOLDED_LINES = 200


def fold_launcher_tracebacks(
    lines: Iterable[tuple[datetime | None, str]],
) -> Iterator[tuple[datetime | None, str]]:
    """``lines`` with each traceback that ends in torchrun's ChildFailedError replaced by
    one line saying so."""
    block: list[tuple[datetime | None, str]] = []
    for when, line in lines:
        if not block:
            if line.startswith("Traceback (most recent call last):"):
                block.append((when, line))
            else:
                yield when, line
            continue
        block.append((when, line))
        if line.startswith((" ", "\t")) and len(block) < _MAX_FOLDED_LINES:
            continue
        if line.startswith(_LAUNCHER_ERROR):
            yield (
                block[0][0],
                (
                    f"[torchx] torchrun's own traceback ({len(block) - 1} lines, ending in "
                    "ChildFailedError) left out; 'torchx log' shows it\n"
                ),
            )
        else:
            yield from block
        block = []
    yield from block
