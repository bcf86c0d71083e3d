"""Where a local app keeps its records, and how they are written and read.

Shared by the scheduler (any torchx process) and the app's supervisor, which imports
only the standard library: every import delays the start of the replicas.
"""

from __future__ import annotations

import errno
import json
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

META_DIR = ".torchx"
# Versioned JSON: any Python (and any tool) reads it, whichever interpreter wrote it.
STATE_VERSION = 1
REQUEST_FILE = "request.json"
STATE_FILE = "state.json"
CANCEL_FILE = "cancel"
SUPERVISOR_LOG = "supervisor.log"
# The scheduler starts the supervisor with this flag before it writes the app's files, so
# that the interpreter starts meanwhile, then writes ``GO`` to its stdin once they are all
# written. A close without ``GO`` (the submission failed) ends it before it reads anything.
GO_ON_STDIN = "--go-on-stdin"
GO = b"go\n"
TIMES_FILE = ".times"
STREAM_CODES = {"stdout": "o", "stderr": "e", "combined": "c"}
# Each replica's output, in <log_dir>/<session>/<app_id>/<role>/<k>/ as pytorch/torchx 0.7
# wrote it, so scripts that read those paths keep working.
STREAM_FILES = {"stdout": "stdout.log", "stderr": "stderr.log", "combined": "combined.log"}
# 0.7's marker in the app directory, written once the app has ended and its output files
# are closed (whatever the outcome, despite the name).
CLOSED_MARKER = "SUCCESS"
# How often the supervisor checks that its app directory exists and looks for the cancel
# marker (signals are the fast path; this is the safety net).
HOUSEKEEPING_INTERVAL = 1.0
# The longest grace the supervisor honours; the scheduler refuses more at submit.
MAX_GRACE_S = 86400.0
# Space set aside at submit for the app's last state: the supervisor frees it when the file
# system is full, so a full disk cannot cost the app its outcome.
RESERVE_FILE = "reserve"
# Errors that say the file system has no room (for now): worth waiting out.
NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


def reserve_bytes(roles: list[str]) -> int:
    """Room for the compact last state of an app with one replica of each of ``roles``.

    In compact form a replica's entry is its role name and under 160 bytes of numbers and
    names, the app's messages are cut to ``MAX_MSG_CHARS`` each, and JSON may write a
    character as six bytes (``\\uXXXX``). Twice that, for the rounding to whole blocks.
    """
    return 2 * (65536 + sum(160 + 6 * len(role) for role in roles))


# The most of each app message the compact last state keeps.
MAX_MSG_CHARS = 2048


class StateFileError(Exception):
    """A state or request file that cannot be read or parsed; names the file."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot read {path}: {reason}")


def write_atomic(path: str, obj: Any, mode: int | None = None) -> None:
    """Write ``obj`` as JSON so that readers see the old file or the new one, never half.

    With ``mode`` the file gets that mode, and is written under a random name made by
    ``mkstemp`` (0600 until then), so no one can read it wider while it is written and a
    temp file a killed writer left behind blocks no later write."""
    if mode is None:
        tmp = f"{path}.{os.getpid()}.tmp"
        _write_json(tmp, obj, os.O_TRUNC)
    else:
        import tempfile

        folder, name = os.path.split(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or None)
        _write_fd(fd, tmp, obj)
        if mode != 0o600:
            os.chmod(tmp, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        remove_file(tmp)
        raise


def write_new(path: str, obj: Any) -> None:
    """Write ``obj`` as JSON into ``path``, which must not exist yet. For the files of an
    app that no reader can find yet (its index entry is made after them): there,
    ``write_atomic``'s rename would protect nobody, and costs a directory update."""
    _write_json(path, obj, os.O_EXCL)


def _write_json(path: str, obj: Any, flag: int) -> None:
    _write_fd(os.open(path, os.O_WRONLY | os.O_CREAT | flag, 0o644), path, obj)


def _write_fd(fd: int, path: str, obj: Any) -> None:
    """Write ``obj`` as JSON into ``fd``, open on ``path``, and close it."""
    try:
        try:
            view = memoryview(json.dumps(obj, separators=(",", ":")).encode())
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    except BaseException:
        remove_file(path)  # a failed write (a full disk) leaves nothing behind
        raise


def make_reserve(meta: str, size: int) -> None:
    """Set ``size`` bytes aside in ``meta`` (see ``RESERVE_FILE``); OSError if there is no room."""
    path = os.path.join(meta, RESERVE_FILE)
    try:  # no larger than a file may be here (``ulimit -f``): the state could not be either
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if limit != resource.RLIM_INFINITY:
            size = min(size, limit)
    except (ImportError, OSError, ValueError):
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            os.posix_fallocate(fd, 0, size)
        except (AttributeError, OSError) as e:
            if isinstance(e, OSError) and e.errno in NO_SPACE:
                raise
            # no fallocate here (macOS, some file systems): write the bytes
            view = memoryview(bytes(size))
            while view:
                view = view[os.write(fd, view) :]
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)


def write_ending(meta: str, obj: Any) -> None:
    """``write_atomic`` of an app's last state into ``meta``, using the reserve if need be."""
    path = os.path.join(meta, STATE_FILE)
    try:
        write_atomic(path, obj)
    except OSError as e:
        if e.errno not in NO_SPACE or not free_reserve(meta):
            raise
        write_atomic(path, obj)


def supervisor_log_hint(meta: str) -> str:
    """ "; see <supervisor.log>" when that log holds something; nothing for an empty one."""
    path = os.path.join(meta, SUPERVISOR_LOG)
    try:
        empty = os.path.getsize(path) == 0
    except OSError:
        return ""
    return "" if empty else f"; see {path}"


def remove_file(path: str) -> bool:
    """Remove ``path``; False if there was nothing to remove (or it could not be removed).

    For markers taken once and files given back: a caller learns whether it was the one
    that removed it, and a failure never stops the supervisor.
    """
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def free_reserve(meta: str) -> bool:
    """Give the reserved space back; False if there was none left to give."""
    return remove_file(os.path.join(meta, RESERVE_FILE))


def read_bytes(path: str) -> bytes:
    """All of ``path``, read with plain system calls: a file object would add a size
    check, a terminal check and seeks to each of the small records read for every app
    a status looks at (and for every app a supervisor starts)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_data(path: str) -> Any:
    """What ``write_atomic`` wrote, or None if there is no such file.

    Raises StateFileError, naming the file, when it cannot be read or is not a state
    document of a version this code knows.
    """
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise StateFileError(path, e.strerror or str(e)) from None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise StateFileError(path, f"not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise StateFileError(path, "not a JSON object")
    if data.get("version") != STATE_VERSION:
        raise StateFileError(
            path, f"format version {data.get('version')!r}; this torchx reads {STATE_VERSION}"
        )
    return data


def unfinished_failed(state: dict[str, Any], msg: str) -> dict[str, Any]:
    """``state`` of an app whose supervisor is gone, ended as FAILED with ``msg``: every
    replica not ended is FAILED too, with no group left to kill."""
    replicas = [
        {**r, "state": "FAILED", "pgid": None} if r.get("state") in ("PENDING", "RUNNING") else r
        for r in state.get("replicas", [])
    ]
    return {
        **state,
        "version": STATE_VERSION,
        "state": "FAILED",
        "msg": msg,
        "structured_error_msg": msg,
        "replicas": replicas,
        "ended_at": time.time(),
    }


def record_orphaned_end(
    meta: str, state: dict[str, Any], supervisor_pid: object, killed: str
) -> dict[str, Any]:
    """Record in ``meta`` that the app's supervisor ended without recording the end of the
    app: ``state`` ended FAILED (see ``unfinished_failed``), ``killed`` saying what became
    of the replicas still running. Returns that last state, written or not."""
    msg = (
        f"the app's supervisor (pid {supervisor_pid}) ended without recording the end "
        f"of the app{killed}{supervisor_log_hint(meta)}"
    )
    final = unfinished_failed(state, msg)
    try:  # noqa: SIM105 -- contextlib stays unimported (see the module docstring)
        write_ending(meta, final)
    except OSError:
        pass  # the app directory is gone: the replicas' groups are killed all the same
    return final


def told_to_go() -> bool:
    """Whether the scheduler wrote ``GO`` to stdin (its files are written), not just closed it."""
    got = b""
    while len(got) < len(GO):
        chunk = os.read(0, len(GO) - len(got))
        if not chunk:
            break
        got += chunk
    return got == GO
