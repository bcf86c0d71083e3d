"""App handles: ``scheduler://session/app_id``, the address of every launched app."""

from __future__ import annotations

import re
from typing import NamedTuple

from torchx.specs._errors import MalformedAppHandleException

AppHandle = str

_HANDLE = re.compile(r"^(?P<scheduler>[A-Za-z0-9_.-]+)://(?P<session>[^/]*)/(?P<app_id>.+)$")


class ParsedAppHandle(NamedTuple):
    scheduler_backend: str
    session_name: str
    app_id: str


def make_app_handle(scheduler_backend: str, session_name: str, app_id: str) -> AppHandle:
    return f"{scheduler_backend}://{session_name}/{app_id}"


def parse_app_handle(app_handle: AppHandle) -> ParsedAppHandle:
    """Split a handle into scheduler, session and app id.

    The session may be empty (``local_cwd:///echo-x1y2``); the app id may not.
    """
    m = _HANDLE.match(app_handle.strip()) if isinstance(app_handle, str) else None
    if m is None:
        raise MalformedAppHandleException(app_handle)
    return ParsedAppHandle(m["scheduler"], m["session"], m["app_id"])
