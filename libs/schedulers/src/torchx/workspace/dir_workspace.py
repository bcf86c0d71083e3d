"""Workspaces copied into a directory that the job runs in (schedulers sharing a filesystem)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping

from torchx.specs import CfgVal, Role, SpecsError, runopts
from torchx.workspace.api import WorkspaceMixin, walk_workspace, workspace_dir


def copy_workspace(workspace: str, target: str, leave_out: Iterable[str] = ()) -> None:
    """Copy the files of ``workspace`` that ``.torchxignore`` keeps into ``target``.

    A ``target`` inside ``workspace`` is left out of the copy (not copied into itself), and
    so are the directories ``leave_out`` names that lie inside it: a scheduler's state
    folder, which holds earlier copies, would otherwise be copied again each time.
    ``workspace`` may be a ``file://`` URL.
    """
    workspace = workspace_dir(workspace)
    for rel in walk_workspace(workspace, leave_out=[target, *leave_out]):
        src = os.path.join(workspace, *rel.split("/"))
        dst = os.path.join(target, *rel.split("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)


class DirWorkspaceMixin(WorkspaceMixin[None]):
    """Copies the workspace into the run option ``job_dir`` (a new directory) and runs the
    role there; without ``job_dir`` the role is left as it is."""

    def workspace_opts(self) -> runopts:
        opts = runopts()
        opts.add(
            "job_dir",
            str,
            "a new directory the workspace is copied into and the job runs in",
        )
        return opts

    def default_workspace(self, cfg: Mapping[str, CfgVal]) -> str | None:
        """The current directory where a ``job_dir`` is given; without one the role runs as
        it is, so there is nothing to copy."""
        return os.getcwd() if cfg.get("job_dir") else None

    def build_workspace_and_update_role(
        self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]
    ) -> None:
        job_dir = cfg.get("job_dir")
        if job_dir is None:
            return
        path = os.path.abspath(os.path.expanduser(str(job_dir)))
        try:
            os.mkdir(path)
        except FileExistsError:
            raise SpecsError(
                "run option 'job_dir'", job_dir, "a directory that does not exist yet"
            ) from None
        copy_workspace(workspace, path)
        role.image = path


class TmpDirWorkspaceMixin(WorkspaceMixin[None]):
    """Copies the workspace into a new temporary directory and runs the role there."""

    def build_workspace_and_update_role(
        self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]
    ) -> None:
        import tempfile  # loaded by the one mixin that uses it, off the CLI start-up path

        path = tempfile.mkdtemp(prefix="torchx_workspace_")
        copy_workspace(workspace, path)
        role.image = path


__all__ = ["DirWorkspaceMixin", "TmpDirWorkspaceMixin", "copy_workspace"]
