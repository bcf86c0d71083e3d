"""local_cwd's copy of a workspace: made on submit inside the app's own directory
(``<app_dir>/.workspace``), so that it goes when the app's record does.

The apps of one group (a sweep's trials) share the bytes of ONE copy: the first app's is
copied from the workspace, and every other app's is a tree of hard links to its files.
Each app still has a directory of its own to run in (a file a trial writes there is its
own), while disk use stays one copy however many trials there are; the filesystem frees
the files once the last app holding them is removed (``torchx list --prune``, the
retention), whichever that is.
"""

from __future__ import annotations

import errno
import os
import shutil

from torchx.schedulers._local_request import LocalRequest
from torchx.workspace.dir_workspace import copy_workspace

# A filesystem that takes no hard link there (or no more of this file): the file is copied.
_NO_LINK = {errno.EPERM, errno.EMLINK, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP}


def make_workspace_copy(req: LocalRequest, state_dir: str, made: str | None = None) -> None:
    """Make ``req.workspace_copy``: of ``made``, the copy already made of the same workspace
    for another app of the group, as hard links to its files; else a copy of
    ``req.workspace``. Raises OSError (its ``filename`` set where it is known)."""
    if made is not None:
        link_tree(made, req.workspace_copy)
        return
    assert req.workspace is not None
    apps_dir = os.path.dirname(req.app_dir)
    # The state and log folders hold every app's copy: inside the workspace (``--workspace
    # .`` from $HOME), copying them would copy the earlier copies again, each run.
    own = (state_dir, os.path.dirname(apps_dir), apps_dir)
    copy_workspace(req.workspace, req.workspace_copy, leave_out=own)


def link_tree(source: str, target: str) -> None:
    """``target`` (made here) holding what the directory ``source`` holds, each file a hard
    link to ``source``'s (a symbolic link is linked as itself, not followed): no file's
    bytes are written."""
    for root, dirs, files in os.walk(source):
        rel = os.path.relpath(root, source)
        into = target if rel == os.curdir else os.path.join(target, rel)
        os.makedirs(into, exist_ok=rel != os.curdir)
        for name in dirs:
            src = os.path.join(root, name)
            if os.path.islink(src):  # os.walk does not go into it: made again as a link
                os.symlink(os.readlink(src), os.path.join(into, name))
        for name in files:
            src, dst = os.path.join(root, name), os.path.join(into, name)
            try:
                os.link(src, dst, follow_symlinks=False)
            except OSError as e:
                if e.errno not in _NO_LINK:
                    raise
                shutil.copy2(src, dst, follow_symlinks=False)


__all__ = ["link_tree", "make_workspace_copy"]
