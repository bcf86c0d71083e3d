"""Processes as the local scheduler sees them: identity across pid reuse, trees, groups.

Standard library only (the supervisor imports it; see ``_local_state_files``).
"""

from __future__ import annotations

import gc
import os
import signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def process_start_token(pid: int) -> str | None:
    """The kernel's start time of ``pid``: with the pid it names one process, even after reuse."""
    found = process_parent_and_start(pid)
    return None if found is None else found[1]


def process_parent_and_start(pid: int) -> tuple[int, str | None] | None:
    """``pid``'s parent and start token (None for a zombie); None where there is no such
    process (or no /proc)."""
    try:
        # one read of a small file: asked for every replica started
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    fields = data[data.rindex(b")") + 2 :].split()
    return int(fields[1]), None if fields[0] in (b"Z", b"X") else fields[19].decode()


def collect_from_now_on() -> None:
    """Turn cyclic garbage collection back on where ``_local_start`` turned it off for
    the start of the process. What was allocated until now is frozen: never walked by a
    collection again (nor, in a process forked later, written to by one), still freed
    when nothing refers to it."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) for every live process; empty where /proc is absent."""
    table: dict[int, tuple[int, int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rindex(b")") + 2 :].split()
        if fields[0] in (b"Z", b"X"):
            continue
        table[int(name)] = (int(fields[1]), int(fields[2]))
    return table


def descendants(roots: set[int], table: dict[int, tuple[int, int]]) -> set[int]:
    """Every process below ``roots`` (not the roots themselves)."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found and child not in roots:
                found.add(child)
                todo.append(child)
    return found


def signal_quietly(pid: int, sig: int, group: bool = False) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_recorded_groups(state: dict[str, Any]) -> list[int]:
    """SIGKILL the process group of every replica recorded in ``state``; the groups hit.

    For when the supervisor is gone. A group is left alone when its leader's pid now
    names another process (the number was reused); while any member of a group lives,
    the kernel gives its number to no new process, so a group without its leader is ours.
    """
    hit = []
    for rec in state.get("replicas", []):
        pgid, token = rec.get("pgid"), rec.get("start")
        if not isinstance(pgid, int) or pgid <= 1:
            continue
        now = process_start_token(pgid)
        if now is not None and token is not None and now != token:
            continue
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        hit.append(pgid)
    return hit


def wait_for_exit(pid: int, timeout: float | None) -> bool:
    """Sleep until process ``pid`` exits (told by the kernel through a pidfd, not by
    polling) or ``timeout`` seconds pass; True at once if there is no such process.

    False, having slept nothing, where pidfds are missing (not Linux, an old kernel):
    the caller polls.
    """
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return False
    try:
        fd = pidfd_open(pid)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    import select  # here: the supervisor, which imports this module, never waits so

    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    return True


def which(name: str, path: str, cwd: str) -> str:
    """The executable ``name`` resolves to for a child with this PATH and directory."""
    if os.sep in name:
        return os.path.join(cwd, name)
    for d in path.split(os.pathsep):
        candidate = os.path.join(d or ".", name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    raise FileNotFoundError(2, "No such file or directory (not on PATH)", name)


_PR_SET_CHILD_SUBREAPER = 36
# The C library's prctl, found once per process (``load_process_helpers``): importing
# ctypes and looking the function up cost more than all else a supervisor does to start
# one replica. False where there is none.
_prctl: Any = None


def load_process_helpers() -> None:
    """Load now what ``become_subreaper`` and ``raise_fd_limit`` need, so that processes
    forked from this one (a group's supervisors) find it loaded."""
    global _prctl
    if _prctl is not None or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import resource  # noqa: F401 -- loaded for ``raise_fd_limit``

        _prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        _prctl = False


def become_subreaper() -> bool:
    """Makes this process adopt its orphaned descendants (Linux); whether it now does."""
    load_process_helpers()
    if not _prctl:
        return False  # orphans then go to init; trees are still killed while their leader lives
    return bool(_prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def raise_fd_limit(replicas: int) -> None:
    """Lifts the open-file limit to what ``replicas`` running replicas hold: two pipes and
    four files each stay open while it runs."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        need = 6 * replicas + 64
        if soft != resource.RLIM_INFINITY and soft < need:
            target = need if hard == resource.RLIM_INFINITY else min(need, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ImportError, ValueError, OSError):
        pass
