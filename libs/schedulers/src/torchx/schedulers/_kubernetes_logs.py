"""A pod's log as the API server sends it, read as a stream whether followed or not.

The whole log is never held: its bytes are read a chunk at a time and cut into lines by
``decoded_lines`` (a line over ``MAX_LINE_BYTES`` comes in pieces), so memory stays bounded
whatever the log's size, and the first lines are given while later ones are still on their
way. A log read to its end has a read timeout (a server that stops sending is reported);
a followed one has none, since its lines may be minutes apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

from torchx.schedulers import _kubernetes_client as limits
from torchx.schedulers._bounded_lines import READ_CHUNK_BYTES, decoded_lines

# A followed log is read in small pieces, so that each line is shown as soon as it comes.
FOLLOW_CHUNK_BYTES = 1024


def log_call_options(follow: bool, since: datetime | None) -> dict[str, Any]:
    """The keyword arguments of ``read_namespaced_pod_log``: each line with its time first,
    an unloaded (streamed) answer, and a read timeout unless the log is followed."""
    options: dict[str, Any] = {"timestamps": True, "_preload_content": False}
    if follow:
        options["follow"] = True
    else:
        # Set here, not left to the client: a user's own client has no limit of its own,
        # and torchx's gives none to a streamed answer.
        options["_request_timeout"] = (limits.CONNECT_TIMEOUT_S, limits.READ_TIMEOUT_S)
    if since is not None:
        age = datetime.now(timezone.utc) - since.astimezone(timezone.utc)
        options["since_seconds"] = max(int(age.total_seconds()), 1)
    return options


def streamed_lines(
    response: Any, follow: bool, broken: Callable[[str], Exception]
) -> Iterator[str]:
    """The lines of the unloaded ``response`` to a log call made with
    ``log_call_options(follow, ...)``; a connection that fails midway raises
    ``broken(why)``. The response is closed when the lines end or their reader stops."""
    import urllib3

    chunks = response.stream(FOLLOW_CHUNK_BYTES if follow else READ_CHUNK_BYTES)
    try:
        lines = decoded_lines(chunks)
        # A log read to its end has always given its last line a newline; a followed one
        # gives it as sent.
        yield from lines if follow else _newline_ended(lines)
    except urllib3.exceptions.HTTPError as e:
        raise broken(limits.why_failed(e)) from None
    finally:
        # Closed first: a reader that stopped early leaves bytes unread on the connection,
        # which must not be reused for another request.
        response.close()
        response.release_conn()


def _newline_ended(lines: Iterable[str]) -> Iterator[str]:
    last: str | None = None
    for line in lines:
        if last is not None:
            yield last
        last = line
    if last is not None:
        yield last if last.endswith("\n") else last + "\n"


__all__ = ["FOLLOW_CHUNK_BYTES", "log_call_options", "streamed_lines"]
