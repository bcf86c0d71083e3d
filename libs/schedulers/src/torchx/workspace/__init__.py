"""torchx.workspace: make a local directory part of what a scheduler launches.

Schedulers mix in :class:`WorkspaceMixin` (``torchx.workspace.api``): the Docker image
workspace (``DockerWorkspaceMixin``, used by local_docker and kubernetes) or a copied
directory (``DirWorkspaceMixin``).
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from torchx.workspace.api import TORCHX_IGNORE, WorkspaceMixin, walk_workspace
    from torchx.workspace.dir_workspace import DirWorkspaceMixin, TmpDirWorkspaceMixin
    from torchx.workspace.docker_workspace import DockerWorkspaceMixin

__all__ = [
    "TORCHX_IGNORE",
    "DirWorkspaceMixin",
    "DockerWorkspaceMixin",
    "TmpDirWorkspaceMixin",
    "WorkspaceMixin",
    "walk_workspace",
]

_MODULE_OF = {
    "TORCHX_IGNORE": "api",
    "WorkspaceMixin": "api",
    "walk_workspace": "api",
    "DirWorkspaceMixin": "dir_workspace",
    "TmpDirWorkspaceMixin": "dir_workspace",
    "DockerWorkspaceMixin": "docker_workspace",
}


def __getattr__(name: str) -> object:
    # Loaded on first use (PEP 562), so importing the package costs nothing.
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
