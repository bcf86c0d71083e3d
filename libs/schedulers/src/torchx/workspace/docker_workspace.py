"""Workspaces as Docker images: the role's image with the workspace copied into its workdir.

Built and pushed through the Docker SDK (``pip install "torchx-schedulers[docker]"``),
imported only when a workspace is built or pushed. Both the local_docker and the kubernetes
scheduler mix this in; registry credentials are those ``docker login`` stored.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterable, Mapping
from typing import IO, Any, TextIO

from torchx.schedulers._errors import SchedulerError, require
from torchx.specs import AppDef, CfgVal, Role, SpecsError, runopts
from torchx.workspace.api import (
    IMAGE_IGNORE_FILES,
    WorkspaceMixin,
    walk_workspace,
    workspace_dir,
)

# The local repository workspace images are tagged in; their tag is a hash of the image id.
WORKSPACE_REPO = "torchx-workspace"
TORCHX_DOCKERFILE = "Dockerfile.torchx"
# The Dockerfile of a workspace image that has no Dockerfile.torchx of its own. Every build
# gets the build arguments IMAGE (the role's image) and WORKSPACE (the workspace as given).
DEFAULT_DOCKERFILE = b"ARG IMAGE\nFROM $IMAGE\n\nCOPY . .\n"
# Images named like this (or by id) are local builds that a remote cluster must be sent.
_LOCAL_PREFIXES = (WORKSPACE_REPO + ":", "sha256:")

ImagesToPush = dict[str, tuple[str, str]]


class DockerWorkspaceMixin(WorkspaceMixin[ImagesToPush]):
    """Builds ``FROM <role image>`` + ``COPY . .`` of the workspace and runs that image.

    A ``Dockerfile.torchx`` in the workspace is built instead, as in pytorch/torchx 0.7; its
    build arguments ``IMAGE`` (the role's image) and ``WORKSPACE`` (the workspace) are given.
    ``docker_client``: a ``docker.DockerClient`` to use; by default one is made from the
    environment (``DOCKER_HOST`` and friends) on first use. ``.dockerignore`` (as in
    pytorch/torchx 0.7), then ``.torchxignore``, exclude files from the build context.
    """

    def __init__(self, *args: Any, docker_client: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.__docker_client = docker_client

    def _new_docker_client(self) -> Any:
        """A client for the engine that builds and pushes, found as the docker CLI finds it
        (``DOCKER_HOST``, then the Docker context, then the default socket); subclasses may
        pick another."""
        from torchx.schedulers._docker_client import connect, resolve_engine

        # errors name the scheduler the user ran (kubernetes builds its images here too)
        return connect(resolve_engine(), owner=self._workspace_owner())

    @property
    def _docker_client(self) -> Any:
        if self.__docker_client is None:
            self.__docker_client = self._new_docker_client()
        return self.__docker_client

    def _close_docker_client(self) -> None:
        if self.__docker_client is not None:
            self.__docker_client.close()
            self.__docker_client = None

    def _workspace_owner(self) -> str:
        return str(getattr(self, "backend", "docker workspace"))

    def workspace_opts(self) -> runopts:
        opts = runopts()
        opts.add(
            "image_repo",
            str,
            "repository workspace images are pushed to before the app starts "
            "(REGISTRY/REPO; needed where the app runs on other machines)",
        )
        opts.add(
            "quiet",
            bool,
            "do not print the workspace image build's output",
            default=False,
        )
        return opts

    def build_workspace_and_update_role(
        self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]
    ) -> None:
        role.image = self.build_workspace_image(role.image, workspace, quiet=bool(cfg.get("quiet")))

    def build_workspace_image(self, base_image: str, workspace: str, quiet: bool = True) -> str:
        """Build ``base_image`` + ``workspace``; returns the new image's local tag."""
        docker = require("docker", scheduler=self._workspace_owner(), extra="docker")
        context = build_context(workspace, DEFAULT_DOCKERFILE.decode())
        client = self._docker_client
        try:
            events = client.api.build(
                fileobj=context,
                custom_context=True,
                dockerfile=TORCHX_DOCKERFILE,
                buildargs={"IMAGE": base_image, "WORKSPACE": workspace},
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
            )
            image_id = self._follow_build(events, base_image, quiet)
        except docker.errors.APIError as e:  # type: ignore[attr-defined]
            raise SchedulerError(
                self._workspace_owner(),
                f"the Docker engine could not build the workspace image ({e.explanation or e})",
            ) from None
        finally:
            context.close()
        import hashlib  # only a build pays for it

        tag = hashlib.sha256(image_id.encode()).hexdigest()[:16]
        client.images.get(image_id).tag(WORKSPACE_REPO, tag=tag)
        return f"{WORKSPACE_REPO}:{tag}"

    def _follow_build(self, events: Iterable[Mapping[str, Any]], base: str, quiet: bool) -> str:
        image_id = None
        for event in events:
            if event.get("error"):
                why = str(event["error"]).strip()
                if not self._has_image(base):
                    # The build's FROM could not pull the role's image: the same fix as a
                    # run without a workspace.
                    raise SchedulerError(
                        self._workspace_owner(),
                        f"the role's image {base} is not on the Docker engine and pulling "
                        f"it for the workspace build failed: {why}",
                        f"docker pull or load {base} first, or give the component another "
                        "image (builtins take --image)",
                    )
                raise SchedulerError(
                    self._workspace_owner(),
                    f"building the workspace image from {base} failed: {why}",
                    "check that the workspace has no file the build cannot read",
                )
            aux = event.get("aux")
            if isinstance(aux, Mapping) and aux.get("ID"):
                image_id = str(aux["ID"])
            message = event.get("stream")
            if message and not quiet:
                sys.stderr.write(str(message))
        if image_id is None:
            raise SchedulerError(
                self._workspace_owner(), "the Docker engine built no workspace image"
            )
        return image_id

    def _has_image(self, image: str) -> bool:
        try:
            self._docker_client.api.inspect_image(image)
        except Exception:  # ImageNotFound, or an engine that stopped answering meanwhile
            return False
        return True

    def dryrun_push_images(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> ImagesToPush:
        """Point each role built from a workspace at ``image_repo``; the pushes to make."""
        repo = cfg.get("image_repo")
        out: ImagesToPush = {}
        for role in app.roles:
            if not role.image.startswith(_LOCAL_PREFIXES):
                continue
            if not repo:
                raise SpecsError(
                    "run option 'image_repo'",
                    repo,
                    f"role {role.name!r} runs the local image {role.image}, which must be "
                    "pushed where the app can pull it; give -cfg image_repo=REGISTRY/REPO",
                )
            tag = role.image.split(":", 1)[1][:64]
            out[role.image] = (str(repo), tag)
            role.image = f"{repo}:{tag}"
        return out

    def push_images(self, images_to_push: ImagesToPush) -> None:
        """Tag each local image as ``repo:tag`` and push it, with ``docker login``'s
        credentials; a refused push raises SchedulerError in the registry's words."""
        if not images_to_push:
            return
        import warnings

        docker = require("docker", scheduler=self._workspace_owner(), extra="docker")
        client = self._docker_client
        # docker login's store as it is now: a login since the client was made counts.
        client.api.reload_config()
        for local, (repo, tag) in images_to_push.items():
            try:
                client.images.get(local).tag(repo, tag=tag)
                with warnings.catch_warnings():
                    # The SDK warns of a missing credential helper, then raises: said once below.
                    warnings.simplefilter("ignore", UserWarning)
                    events = client.api.push(repo, tag=tag, stream=True, decode=True)
                errors = [str(e["error"]) for e in events if e.get("error")]
            except docker.errors.APIError as e:  # type: ignore[attr-defined]
                errors = [str(e.explanation or e)]
            except docker.errors.DockerException as e:  # type: ignore[attr-defined]
                raise credential_helper_failed(
                    self._workspace_owner(), f"pushing {repo}:{tag} (run option image_repo)", e
                ) from None
            if errors:
                registry = repo.split("/", 1)[0] if "/" in repo else "docker.io"
                raise SchedulerError(
                    self._workspace_owner(),
                    f"pushing {repo}:{tag} failed: {errors[-1]}",
                    f"check run option image_repo={repo!r}; `docker login {registry}` "
                    "stores credentials",
                )


def build_context(workspace: str, dockerfile: str) -> IO[bytes]:
    """The build context of a workspace image: a tar of the files ``.dockerignore`` and
    ``.torchxignore`` keep (``walk_workspace``, the matcher every workspace uses) and the
    ``Dockerfile.torchx`` to build: the workspace's own, which no ignore file leaves out (as
    in pytorch/torchx 0.7), else ``dockerfile``. Spooled to disk past a few MiB."""
    import tarfile
    import tempfile

    workspace = workspace_dir(workspace)
    own = os.path.join(workspace, TORCHX_DOCKERFILE)
    out = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024)  # noqa: SIM115 -- returned
    with tarfile.open(fileobj=out, mode="w") as tar:
        for rel in walk_workspace(workspace, IMAGE_IGNORE_FILES):
            if rel != TORCHX_DOCKERFILE:
                tar.add(os.path.join(workspace, *rel.split("/")), arcname=rel, recursive=False)
        if os.path.isfile(own):
            tar.add(own, arcname=TORCHX_DOCKERFILE, recursive=False)
        else:
            data = dockerfile.encode()
            info = tarfile.TarInfo(TORCHX_DOCKERFILE)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    out.seek(0)
    return out


def credential_helper_failed(scheduler: str, transfer: str, error: BaseException) -> SchedulerError:
    """``transfer`` (``pushing IMAGE ...``) found no credentials: the helper that docker
    login's store names failed or is missing."""
    reason = " ".join(str(error).split())
    return SchedulerError(
        scheduler,
        f"{transfer} needs docker login's credentials, and asking for them failed ({reason})",
        "install the helper that credsStore or credHelpers names in $DOCKER_CONFIG/config.json "
        "(default ~/.docker/config.json), or run `docker login` again",
    )


def print_push_events(events: Iterable[Mapping[str, Any]], stream: TextIO | None = None) -> None:
    """Print the progress events of an image push (``docker.APIClient.push(...,
    decode=True)``) one line each to ``stream`` (stderr by default); an ``error`` event
    raises ``SchedulerError`` quoting it."""
    out = stream if stream is not None else sys.stderr
    for event in events:
        if "error" in event:
            raise SchedulerError("docker", f"pushing the image failed: {event['error']}")
        status = event.get("status")
        if not status:
            continue
        layer = f"{event['id']}: " if event.get("id") else ""
        progress = f" {event['progress']}" if event.get("progress") else ""
        print(f"docker push {layer}{status}{progress}", file=out)


__all__ = [
    "DEFAULT_DOCKERFILE",
    "TORCHX_DOCKERFILE",
    "WORKSPACE_REPO",
    "DockerWorkspaceMixin",
    "ImagesToPush",
    "build_context",
    "print_push_events",
]
