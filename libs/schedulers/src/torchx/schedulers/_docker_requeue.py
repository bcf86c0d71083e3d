"""``requeue`` on local_docker: the app's containers are warned, stopped and started again.

Every replica is warned at once with ``docker stop`` (its StopSignal, SIGTERM, then SIGKILL
after its StopTimeout, the run option ``stop_grace_seconds``), so a distributed app's ranks
stop together. The same containers are then started again: the handle, the container names
and the log (each attempt's lines after the one before) stay. A container's environment is
fixed when it is created, so the next attempt number goes into a file in the container's
own filesystem, which torchx.runtime.preemption's ``attempt()`` reads (``$TORCHX_ATTEMPT_FILE``).
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

# torchx.runtime.preemption.ATTEMPT_FILE_ENV, repeated: the launcher does not depend on it.
ATTEMPT_FILE_ENV = "TORCHX_ATTEMPT_FILE"
# At the root of the container's filesystem: the one folder every image has.
ATTEMPT_FILE = "/.torchx-attempt"
# A number and a newline; anything longer is not this file.
_MAX_ATTEMPT_BYTES = 32


def _attempt_archive(attempt: int) -> bytes:
    """A tar stream holding ATTEMPT_FILE (put_archive takes tar, as ``docker cp`` does)."""
    data = f"{attempt}\n".encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(ATTEMPT_FILE.lstrip("/"))
        info.size = len(data)
        info.mode = 0o644
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def read_attempt(api: Any, container_id: str, not_found: type[Exception]) -> int:
    """The attempt a container runs: 0 until it was requeued, then the file's number."""
    try:
        stream, _stat = api.get_archive(container_id, ATTEMPT_FILE)
    except not_found:
        return 0
    raw = b"".join(stream)
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        member = tar.next()
        got = tar.extractfile(member) if member is not None else None
        text = got.read(_MAX_ATTEMPT_BYTES).decode(errors="replace").strip() if got else ""
    return int(text) if text.isdigit() else 0


def _grace(attrs: Mapping[str, Any]) -> int:
    timeout = attrs.get("Config", {}).get("StopTimeout")
    return int(timeout) if isinstance(timeout, int) else 10  # Docker's own default


def requeue_containers(api: Any, containers: list[dict[str, Any]], attempt: int) -> None:
    """Stop every container (all warned at once, each within its grace), write ``attempt``
    into each, and start them again."""
    running = [c for c in containers if c.get("State", {}).get("Running")]
    if running:
        with ThreadPoolExecutor(max_workers=min(len(running), 16)) as pool:
            stops = [pool.submit(api.stop, c["Id"], timeout=_grace(c)) for c in running]
            for stop in stops:
                stop.result()
    archive = _attempt_archive(attempt)
    for c in containers:
        api.put_archive(c["Id"], "/", archive)
    for c in containers:
        api.start(c["Id"])
