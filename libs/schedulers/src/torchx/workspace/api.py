"""Workspaces: a local directory made part of what a scheduler launches.

A scheduler that supports ``--workspace`` mixes in a :class:`WorkspaceMixin`: before the
app is dry-run, ``build_workspace_and_update_role`` turns the directory into something the
scheduler can run (an image with the files copied in, a job directory) and points the role
at it. Remote schedulers that pull images also implement ``dryrun_push_images`` (name the
pushed images in the request) and ``push_images`` (push them at submit).
"""

from __future__ import annotations

import abc
import fnmatch
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Generic, TypeVar

from torchx.specs import AppDef, CfgVal, Role, SpecsError, runopts

TORCHX_IGNORE = ".torchxignore"

T = TypeVar("T")


class WorkspaceMixin(abc.ABC, Generic[T]):
    """What a scheduler implements to take a workspace; ``T`` describes images to push.

    Mixed in before :class:`~torchx.schedulers.api.Scheduler` (``class S(WorkspaceMixin[T],
    Scheduler[R])``); ``Scheduler.run_opts`` then includes ``workspace_opts``.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)

    def workspace_opts(self) -> runopts:
        """The run options the workspace adds to the scheduler's."""
        return runopts()

    def default_workspace(self, cfg: Mapping[str, CfgVal]) -> str | None:
        """The workspace the ``torchx`` CLI uses when none is given, under the resolved run
        options ``cfg``; None: run without one. The current directory, as with
        pytorch/torchx 0.7 (``--workspace ""`` turns it off); the Python API builds no
        workspace unless one is passed."""
        return os.getcwd()

    @abc.abstractmethod
    def build_workspace_and_update_role(
        self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]
    ) -> None:
        """Make ``workspace`` runnable for ``role`` and point ``role`` (changed in place) at
        the result, usually by setting ``role.image``."""

    def dryrun_push_images(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> T:
        """Point ``app``'s roles (changed in place) at where their workspace images will be
        pushed; returns what ``push_images`` needs to push them."""
        raise NotImplementedError(f"{type(self).__name__} does not push images")

    def push_images(self, images_to_push: T) -> None:
        """Push what ``dryrun_push_images`` returned; called at submit, before the app starts."""
        raise NotImplementedError(f"{type(self).__name__} does not push images")


DOCKER_IGNORE = ".dockerignore"
# What an image build leaves out: what .dockerignore lists, as pytorch/torchx 0.7's image
# workspaces did (a user's file keeps working), then .torchxignore, whose `!` lines win.
IMAGE_IGNORE_FILES = (DOCKER_IGNORE, TORCHX_IGNORE)


def read_ignore_patterns(
    workspace: str, ignore_files: Sequence[str] = (TORCHX_IGNORE,)
) -> list[str]:
    """The patterns of ``workspace``'s ignore files (``.torchxignore`` by default;
    .dockerignore syntax), in order, after the ignore files themselves.

    Each line is read as pytorch/torchx 0.7 read both files: text from ``#`` on is a
    comment (``secret.env  # never ship`` leaves out ``secret.env``), and a line of only
    ``.`` (the workspace itself) is skipped."""
    patterns = [TORCHX_IGNORE, DOCKER_IGNORE]
    for name in ignore_files:
        path = os.path.join(workspace, name)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                pattern = line.partition("#")[0].strip()
                if pattern and pattern != ".":
                    patterns.append(pattern)
    return patterns


def is_ignored(relpath: str, patterns: list[str]) -> bool:
    """Whether ``relpath`` (``/``-separated, relative to the workspace) is excluded.

    Later patterns win, and a pattern starting with ``!`` brings a path back, as in
    ``.dockerignore``; a pattern matching a directory excludes what is under it.
    """
    parts = relpath.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        body = pattern[1:] if negate else pattern
        body = body.strip("/")
        if body.startswith("./"):
            body = body[2:]
        if any(fnmatch.fnmatchcase(p, body) for p in prefixes):
            ignored = not negate
    return ignored


def workspace_dir(workspace: str) -> str:
    """The local directory ``workspace`` names: a path, or a ``file://`` URL as 0.7's
    fsspec workspaces were written (``file:///home/me/proj``). Other URLs are refused."""
    if "://" not in workspace:
        return workspace
    from urllib.parse import unquote, urlparse

    url = urlparse(workspace)
    if url.scheme != "file" or url.netloc not in ("", "localhost"):
        raise SpecsError(
            "workspace",
            workspace,
            "a local directory or a file:// URL; copy a remote workspace to this machine first",
        )
    return unquote(url.path)


def walk_workspace(
    workspace: str | os.PathLike[str] | None = None,
    ignore_files: Sequence[str] | str = (TORCHX_IGNORE,),
    ignore_name: str = TORCHX_IGNORE,
    *,
    fs: object = None,
    path: object = None,
    leave_out: Iterable[str] = (),
) -> Iterator[str]:
    """The files of ``workspace`` (a path, ``pathlib.Path`` or ``file://`` URL) that its
    ignore files (``.torchxignore``; an image build passes ``IMAGE_IGNORE_FILES``) keep, as
    relative paths. Checked when called, so a bad workspace fails before iterating.

    ``leave_out``: directories not walked at all where they lie inside the workspace (a
    copy's own target, a scheduler's state folder), whatever the ignore files say; others
    are ignored.

    ``fs``, ``path`` and ``ignore_name`` are pytorch/torchx 0.7's parameters
    (``walk_workspace(fs, path, ignore_name)``, which walked an fsspec filesystem): ``fs``
    or ``path``, a filesystem in ``workspace``'s place, an ``ignore_name`` other than its
    default, or no workspace at all is a SpecsError naming that field and how the call is
    written here.
    """
    if isinstance(workspace, os.PathLike):
        workspace = os.fspath(workspace)
    workspace = _refuse_0_7_form(workspace, ignore_name, fs, path)
    if isinstance(ignore_files, str):  # one name, as 0.7's ignore_name was
        ignore_files = (ignore_files,)
    directory = workspace_dir(workspace)
    if not os.path.isdir(directory):
        raise SpecsError("workspace", directory, "give an existing directory")
    patterns = read_ignore_patterns(directory, ignore_files)
    return _kept_files(directory, patterns, _inside(directory, leave_out))


def _inside(workspace: str, directories: Iterable[str]) -> frozenset[str]:
    """Those of ``directories`` strictly inside ``workspace``, as ``/``-separated paths
    relative to it. Compared by real path: a state folder named through a symbolic link
    (``$HOME`` as a link) is still the folder the walk meets."""
    root = os.path.realpath(workspace)
    inside = set()
    for directory in directories:
        rel = os.path.relpath(os.path.realpath(directory), root)
        if rel != os.curdir and not rel.startswith(os.pardir):
            inside.add(rel.replace(os.sep, "/"))
    return frozenset(inside)


_WRITTEN = "walk_workspace(workspace, ignore_files) takes the directory and its ignore files"


def _refuse_0_7_form(workspace: object, ignore_name: str, fs: object, path: object) -> str:
    """``workspace``, a path; else a one-line SpecsError for a call written as 0.7's
    ``walk_workspace(fs, path, ignore_name)`` or with no workspace, naming the field that
    gives it away."""
    if fs is not None or not isinstance(workspace, (str, type(None))):
        field = "fs" if fs is not None else "workspace"
        given = fs if fs is not None else workspace
        raise SpecsError(
            f"walk_workspace's {field}",
            type(given).__name__,
            f"not a directory path (0.7 took a filesystem here); {_WRITTEN}",
        )
    if path is not None:
        raise SpecsError(
            "walk_workspace's path",
            path,
            f"0.7's name for the directory; {_WRITTEN}: walk_workspace({path!r}, "
            f"[{ignore_name!r}])",
        )
    if workspace is None:
        raise SpecsError(
            "walk_workspace's workspace", None, f"not given; {_WRITTEN} (a directory path)"
        )
    if ignore_name != TORCHX_IGNORE:
        raise SpecsError(
            "walk_workspace's ignore_name",
            ignore_name,
            f"0.7's one ignore file; {_WRITTEN}: walk_workspace({workspace!r}, [{ignore_name!r}])",
        )
    return workspace


def _kept_files(workspace: str, patterns: list[str], leave_out: frozenset[str]) -> Iterator[str]:
    for root, dirs, files in os.walk(workspace):
        rel_root = os.path.relpath(root, workspace)
        base = "" if rel_root == "." else rel_root.replace(os.sep, "/") + "/"
        if leave_out:  # never walked: what they hold may be any size
            dirs[:] = [d for d in dirs if base + d not in leave_out]
        # Prune ignored directories unless a later '!' pattern could bring something back.
        if not any(p.startswith("!") for p in patterns):
            dirs[:] = [d for d in dirs if not is_ignored(base + d, patterns)]
        dirs.sort()
        for name in sorted(files):
            rel = base + name
            if not is_ignored(rel, patterns):
                yield rel


__all__ = [
    "DOCKER_IGNORE",
    "IMAGE_IGNORE_FILES",
    "TORCHX_IGNORE",
    "WorkspaceMixin",
    "is_ignored",
    "read_ignore_patterns",
    "walk_workspace",
    "workspace_dir",
]
