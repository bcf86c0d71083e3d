"""How the local supervisor ends processes: a replica's whole tree (``terminate``), what
ended replicas left in their process groups (``end_groups``), and every process still
below the supervisor when the app ends (``kill_leftovers``).

Standard library only, like every module the supervisor imports. Each function waits
through ``Supervisor.wait_events``, so the replicas' output is still copied and their
ends reaped while it waits.
"""

from __future__ import annotations

import os
import signal
import time

from torchx.schedulers._local_processes import descendants, process_table, signal_quietly
from torchx.schedulers._local_state_files import read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from torchx.schedulers._local_replica import Replica
    from torchx.schedulers._local_supervisor import Supervisor


def terminate(sup: Supervisor, targets: list[Replica]) -> list[Replica]:
    """End each target's whole process tree: SIGTERM, then SIGKILL after the grace. The
    targets whose app was still running when the grace ran out (killed mid-checkpoint,
    maybe)."""
    alive = [r for r in targets if r.pid is not None and r.pid in sup.by_pid]
    if not alive:
        return []
    for r in alive:
        r.killed = True
    leaders = {r.pid for r in alive if r.pid is not None}
    tree = descendants(leaders, process_table()) | leaders
    for pid in leaders:
        signal_quietly(pid, signal.SIGTERM, group=True)
    for pid in tree:
        signal_quietly(pid, signal.SIGTERM)
    deadline = time.monotonic() + sup.grace
    while any(r.pid in sup.by_pid for r in alive):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sup.wait_events(left)
    # Whatever is left (stubborn leaders, children that ignored SIGTERM, or children
    # started during the grace period) gets SIGKILL.
    stubborn = [r for r in alive if r.pid in sup.by_pid]
    table = process_table()
    tree |= descendants(tree, table)
    for pid in leaders:
        signal_quietly(pid, signal.SIGKILL, group=True)
    for pid in tree:
        if pid in table:
            signal_quietly(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10.0
    while any(r.pid in sup.by_pid for r in alive) and time.monotonic() < deadline:
        sup.wait_events(deadline - time.monotonic())
    return stubborn


def end_groups(sup: Supervisor, pgids: set[int]) -> None:
    """End every process left in the process groups ``pgids`` of replicas that ended:
    SIGTERM, then SIGKILL after the grace; returns once they are gone."""
    live = _live_groups(sup, pgids - set(sup.by_pid))  # not those of running replicas
    if not live:
        return
    for pgid in live:
        signal_quietly(pgid, signal.SIGTERM, group=True)
    deadline = time.monotonic() + sup.grace
    while live and time.monotonic() < deadline:
        sup.wait_events(min(0.01, max(0.0, deadline - time.monotonic())))
        live = _live_groups(sup, live)
    for pgid in live:
        signal_quietly(pgid, signal.SIGKILL, group=True)
    deadline = time.monotonic() + 10.0
    while live and time.monotonic() < deadline:
        sup.wait_events(0.01)
        live = _live_groups(sup, live)


def _live_groups(sup: Supervisor, pgids: set[int]) -> set[int]:
    """Those of ``pgids`` that still have a live member of ours.

    Orphans of an ended replica are adopted by this subreaper: a group whose members
    are none of our descendants got its number reused, and is left alone. Without
    /proc or the subreaper, a group that answers a signal counts.
    """
    if not pgids:
        return set()
    table = process_table()
    if table and sup.subreaper:
        return {table[p][1] for p in descendants({os.getpid()}, table)} & pgids
    live = set()
    for pgid in pgids:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            continue
        live.add(pgid)
    return live


def kill_leftovers(sup: Supervisor) -> None:
    """End every process still below the supervisor (orphans it adopted included)."""
    terminate(sup, [r for r in sup.replicas if r.pid in sup.by_pid])
    sup.reap()
    if sup.subreaper and not _has_children(sup):
        return  # orphans would have become our children: there are none
    me = os.getpid()
    table = process_table()
    rest = descendants({me}, table)
    if sup.guard_pid is not None:
        rest.discard(sup.guard_pid)
    if not rest:
        return
    for pid in rest:
        signal_quietly(pid, signal.SIGTERM)
    deadline = time.monotonic() + min(sup.grace, 2.0)
    while rest and time.monotonic() < deadline:
        sup.wait_events(0.01)
        table = process_table()
        rest = {p for p in rest if p in table}
    for pid in rest:
        signal_quietly(pid, signal.SIGKILL)
    sup.reap()


def _has_children(sup: Supervisor) -> bool:
    """Whether a process other than the watchdog is our child (an adopted orphan)."""
    me = os.getpid()
    try:
        listed = read_bytes(f"/proc/{me}/task/{me}/children")
        return bool({int(p) for p in listed.split()} - {sup.guard_pid})
    except (OSError, ValueError):
        pass
    try:
        os.waitpid(-1, os.WNOHANG)  # reaps nothing we track: all replicas are reaped
    except ChildProcessError:
        return False
    return True  # the watchdog at least: look at the process table
