"""Starting the local scheduler's own processes: an app's supervisor, a group's process.

Both are started before they are told what to run (``GO`` on a supervisor's stdin, the
apps' directories on a group's): their interpreters start while the scheduler writes
the apps' files, or while a sweep's trials are still being planned (``start_group``).
Until told, they have touched nothing, so one whose stdin is closed without a word exits
at once with nothing done (``call_off``): every app's files are written first, or none.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

# The supervisor and the group are run through this script (see its docstring); neither
# is imported by the scheduler, which keeps submitting light.
START_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_local_start.py")
SUPERVISOR = (sys.executable, "-I", "-S", START_SCRIPT, "_local_supervisor")
GROUP = (sys.executable, "-I", "-S", START_SCRIPT, "_local_group")


def start_group(
    parallel: int, name: str, log_path: str, *, new_log: bool = False
) -> subprocess.Popen[bytes]:
    """A group's process, running at most ``parallel`` apps at once (0: all), ``name`` on
    its command line, its output appended to ``log_path`` (``new_log``: a file that must
    not exist yet, FileExistsError otherwise); waiting for its apps on stdin."""
    with open(log_path, "xb" if new_log else "ab") as log:
        return subprocess.Popen(
            [*GROUP, str(parallel), name],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )


def call_off(process: subprocess.Popen[bytes] | None) -> bool:
    """End a supervisor not yet told ``GO``, or a group not yet told its apps: its stdin
    closed without them, it exits having touched nothing; returns once it has exited.
    Again for one already called off, it returns at once. False, doing nothing, for a
    group already told its apps (``tell``): it runs them, and they are the user's now.

    A called-off process's stdin is dropped (None), so that a closed stdin means told."""
    if process is None:
        return True
    if told(process):
        return False
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
        process.stdin = None
    process.wait()
    return True


def told(group: subprocess.Popen[bytes]) -> bool:
    """Whether ``tell`` told ``group`` its apps: its stdin was closed by it (the end of
    the list, after which the group runs them), not dropped by ``call_off``."""
    return group.stdin is not None and group.stdin.closed


def tell(group: subprocess.Popen[bytes], app_dirs: list[str]) -> None:
    """Tell a group from ``start_group`` its apps, their directories one a line (any
    number of them, where argv has a limit); once this returns, it runs them.

    The group reads to the end of its stdin before it starts any app. Should telling fail
    before that end is written (the group has ended: OSError; an interrupt), it is ended
    by a kill, not by closing its stdin (which would hand it the lines written so far),
    and reaped: it started nothing, and ``call_off`` then returns at once."""
    stdin = group.stdin
    assert stdin is not None
    try:
        stdin.write("".join(f"{d}\n" for d in app_dirs).encode())
        stdin.flush()
        stdin.close()  # the end of the list: from here the apps are the group's
    except BaseException:
        if not stdin.closed:
            group.kill()
            group.wait()
            with contextlib.suppress(OSError):  # what is left unwritten is dropped
                stdin.close()
            group.stdin = None
        raise
