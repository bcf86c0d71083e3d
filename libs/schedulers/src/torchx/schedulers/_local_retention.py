"""Local app records newest first, read lazily, and the removal of old ones.

The index holds one link per app, made when the app was submitted: the link's own time
orders the apps without opening any of them, so listing the newest few costs the same
with twenty records as with thousands.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import datetime

from torchx.schedulers._api import ListAppResponse
from torchx.schedulers._local_records import (
    AppStateError,
    LocalAppRecords,
    state_of,
)
from torchx.schedulers._local_state_files import META_DIR, REQUEST_FILE, read_data
from torchx.specs import is_terminal


def _links_newest_first(records: LocalAppRecords) -> list[tuple[float, str]]:
    found = []
    for entry in records.links():
        try:
            found.append((entry.stat(follow_symlinks=False).st_mtime, entry.name))
        except FileNotFoundError:
            continue  # removed meanwhile
    found.sort(reverse=True)
    return found


def iter_newest(
    records: LocalAppRecords, submitted_after: datetime | None = None
) -> Iterator[ListAppResponse]:
    """The apps newest first, each read only when the caller asks for it."""
    limit = submitted_after.timestamp() if submitted_after is not None else None
    for linked_at, app_id in _links_newest_first(records):
        if limit is not None and linked_at < limit:
            return
        app_dir = records.app_dir(app_id)
        if app_dir is not None:
            yield records.summary(app_id, app_dir, linked_at)


def prune(records: LocalAppRecords, ended_before: datetime) -> list[str]:
    """Remove the records and logs of apps that ended before ``ended_before``; their ids.

    An app still running (or whose end is not recorded) is kept, whatever its age; so is
    a directory that does not hold the app's own request, which torchx did not make.
    """
    cutoff = ended_before.timestamp()
    removed = []
    for linked_at, app_id in _links_newest_first(records):
        if linked_at >= cutoff:
            continue  # submitted after the cut-off: it cannot have ended before it
        link = records.index / app_id
        app_dir = records.app_dir(app_id)
        if app_dir is None:
            # A link to nothing: the app's directory is gone already.
            if not os.path.exists(link):
                os.unlink(link)
                removed.append(app_id)
            continue
        try:
            _, state = records.current_state(app_id, app_dir)
        except AppStateError:
            continue  # unreadable: left for a person to look at
        ended = state.get("ended_at")
        if not is_terminal(state_of(state.get("state", "UNKNOWN"))):
            continue
        if not isinstance(ended, (int, float)) or ended >= cutoff:
            continue
        request = read_data(os.path.join(app_dir, META_DIR, REQUEST_FILE)) or {}
        if request.get("app_id") != app_id:
            continue
        # The link first: a crash between the two leaves a directory nobody lists, never
        # a listed app without its files.
        os.unlink(link)
        shutil.rmtree(app_dir, ignore_errors=True)
        removed.append(app_id)
    return removed
