"""How much a workspace ships: measured over the files ``.torchxignore`` keeps, before a
build, so a folder holding a virtualenv, data or checkpoints is named before it is copied
into every image.

The measure streams over ``walk_workspace`` (the walk every workspace builds from) with one
``lstat`` per file and reads no file: time grows with the number of files the workspace
keeps, memory with its number of top-level entries only.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from torchx.workspace.api import TORCHX_IGNORE, walk_workspace, workspace_dir

# Past this many bytes shipped, the CLI warns (once) before building.
LARGE_WORKSPACE_BYTES = 100 << 20
# How many of the largest top-level entries the warning names.
LARGEST_SHOWN = 3


@dataclass
class WorkspaceSize:
    """The bytes a workspace ships, in all and per top-level entry (file or directory)."""

    total: int = 0
    files: int = 0
    by_entry: dict[str, int] = field(default_factory=dict)

    def add(self, relpath: str, size: int) -> None:
        top = relpath.split("/", 1)[0]
        self.total += size
        self.files += 1
        self.by_entry[top] = self.by_entry.get(top, 0) + size

    def largest(self, n: int = LARGEST_SHOWN) -> list[tuple[str, int]]:
        """The ``n`` largest top-level entries, largest first (ties by name)."""
        return heapq.nsmallest(n, self.by_entry.items(), key=lambda kv: (-kv[1], kv[0]))


def measure_workspace(
    workspace: str, ignore_files: Sequence[str] = (TORCHX_IGNORE,)
) -> WorkspaceSize:
    """The size of what ``workspace`` ships, less what ``ignore_files`` list (symbolic
    links count as themselves, as they are copied)."""
    root = workspace_dir(workspace)
    size = WorkspaceSize()
    for rel in walk_workspace(root, ignore_files):
        try:
            st = os.lstat(os.path.join(root, *rel.split("/")))
        except FileNotFoundError:  # removed since the walk listed it
            continue
        size.add(rel, st.st_size)
    return size


def human_size(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps it at 1 or more (``2.5 GiB``)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def large_workspace_warning(
    workspace: str,
    limit: int = LARGE_WORKSPACE_BYTES,
    ignore_files: Sequence[str] = (TORCHX_IGNORE,),
) -> str | None:
    """One line naming what makes ``workspace`` large when it ships more than ``limit``
    bytes (less what ``ignore_files`` list), else None. A warning only: large workspaces
    are sometimes built on purpose."""
    size = measure_workspace(workspace, ignore_files)
    if size.total <= limit:
        return None
    entries = ", ".join(
        f"{name}{'/' if os.path.isdir(os.path.join(workspace_dir(workspace), name)) else ''}"
        f" {human_size(n)}"
        for name, n in size.largest()
        if n * 100 >= size.total  # an entry under 1% of the total is not the cause
    )
    return (
        f"torchx: warning: the workspace {workspace} ships {human_size(size.total)} "
        f"({size.files} files), over {human_size(limit)}; largest: {entries}; add them to "
        f'{TORCHX_IGNORE}, or --workspace "" to skip'
    )


__all__ = [
    "LARGE_WORKSPACE_BYTES",
    "WorkspaceSize",
    "human_size",
    "large_workspace_warning",
    "measure_workspace",
]
