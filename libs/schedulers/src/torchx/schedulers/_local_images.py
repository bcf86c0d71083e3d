"""Where a local role runs: image providers map a role's image to a directory here.

Made once per dry-run from the resolved run options (``provider_class(cfg)``).
"""

from __future__ import annotations

import abc
import os
import shutil
from collections.abc import Callable, Mapping

from torchx.schedulers._local_request import LocalReplicaParams
from torchx.specs import CfgVal, Role, SpecsError


class ImageProvider(abc.ABC):
    """Where a role's replicas run on this machine, given the role's image.

    Made once per dry-run from the resolved run options (``provider_class(cfg)``).
    """

    def __init__(self, cfg: Mapping[str, CfgVal] | None = None) -> None:
        self.cfg = dict(cfg or {})

    def fetch_role(self, role: Role) -> str:
        """The image root of ``role`` (``fetch(role.image)`` unless overridden)."""
        return self.fetch(role.image)

    @abc.abstractmethod
    def fetch(self, image: str) -> str:
        """The directory ``image`` stands for on this machine (made ready if needed)."""

    def get_cwd(self, image: str) -> str | None:
        """The directory replicas start in; None for the image root."""
        return None

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        """The program to run: by default the role's entrypoint inside the image root."""
        return os.path.join(img_root, role.entrypoint)

    def get_replica_param(
        self,
        img_root: str,
        role: Role,
        stdout: str | None = None,
        stderr: str | None = None,
        combined: str | None = None,
    ) -> LocalReplicaParams:
        """How one replica of ``role`` starts (0.7's ``ReplicaParam``): ``args`` (the
        entrypoint, then the role's arguments), the role's ``env`` and ``cwd``.

        ``img_root`` is ``fetch(role.image)``. Output files are not chosen here: local_cwd
        writes each replica's under its ``log_dir``, so giving ``stdout``, ``stderr`` or
        ``combined`` is refused rather than ignored.
        """
        given = {"stdout": stdout, "stderr": stderr, "combined": combined}
        for name, path in given.items():
            if path is not None:
                raise SpecsError(
                    name,
                    path,
                    "local_cwd writes each replica's output under the run option log_dir; "
                    "leave it out",
                )
        return LocalReplicaParams(
            role=role.name,
            id=0,
            argv=[self.get_entrypoint(img_root, role), *role.args],
            env=dict(role.env),
            cwd=self.get_cwd(role.image) or img_root,
        )


class LocalDirectoryImageProvider(ImageProvider):
    """The image is a directory on this machine; replicas run in it and a relative
    entrypoint is looked up there (then on PATH)."""

    def fetch(self, image: str) -> str:
        if not image or not os.path.isdir(image):
            raise SpecsError(
                "role image",
                image,
                "the local_dir scheduler runs in a directory; give an existing one (a "
                "builtin component takes --image DIR), or run on local_cwd (-s local_cwd)",
            )
        return os.path.abspath(image)

    def get_cwd(self, image: str) -> str | None:
        return self.fetch(image)

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return role.entrypoint


class CWDImageProvider(ImageProvider):
    """Replicas run in the role's image when it names a directory, else in the current
    directory (pytorch/torchx always used the current directory)."""

    def fetch(self, image: str) -> str:
        return os.path.abspath(image) if image and os.path.isdir(image) else os.getcwd()

    def get_cwd(self, image: str) -> str | None:
        return self.fetch(image)

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return role.entrypoint


def _which(name: str, path: str) -> str | None:
    return shutil.which(name, path=path)


def join_path(*parts: str | None) -> str:
    return os.pathsep.join(p for p in parts if p)


def resolve_entrypoint(
    role: Role,
    entrypoint: str,
    cwd: str,
    env: Mapping[str, str],
    which: Callable[[str, str], str | None] | None = None,
) -> None:
    """Refuse, before anything starts, an entrypoint that cannot be executed. ``which``
    looks a program up on a PATH (``shutil.which``, or one that remembers lookups)."""
    if os.sep in entrypoint:
        path = os.path.join(cwd, entrypoint)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return
        problem = f"{path} is not an executable file"
    else:
        search = env.get("PATH", os.environ.get("PATH", os.defpath))
        if (which or _which)(entrypoint, search):
            return
        problem = "not found on PATH"
    raise SpecsError(
        f"role {role.name!r} entrypoint",
        entrypoint,
        f"{problem}; give a program on PATH or a path relative to {cwd}",
    )
