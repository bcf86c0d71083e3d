"""Registry credentials where the docker CLI keeps them, for the engine's pulls and pushes.

``docker login`` stores a registry's credentials in ``$DOCKER_CONFIG/config.json`` (default
``~/.docker``): under ``auths`` as base64 ``user:password`` or an identity token, or in a
credential helper (``credHelpers`` per registry, ``credsStore`` for all) that is asked with
``docker-credential-<name> get``. The engine wants them in an ``X-Registry-Auth`` header.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any

from torchx.schedulers._docker_engine import config_dir
from torchx.specs import SpecsError

# The key docker login uses for Docker Hub, whatever host name the image used.
INDEX_SERVER = "https://index.docker.io/v1/"


def registry_of(image: str) -> str:
    """The registry host of an image reference (Docker Hub's is ``docker.io``)."""
    first, sep, _rest = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def split_reference(image: str) -> tuple[str, str]:
    """``repo[:tag|@digest]`` -> (repo, tag or digest), the tag defaulting to ``latest``."""
    if "@" in image:
        repo, _, digest = image.partition("@")
        return repo, digest
    head, sep, tag = image.rpartition(":")
    if sep and "/" not in tag:
        return head, tag
    return image, "latest"


def _config(env: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    path = os.path.join(config_dir(env), "config.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except FileNotFoundError:
        return {}, path
    except (OSError, ValueError) as e:
        raise SpecsError(path, "config.json", f"a readable docker config ({e})") from None
    return (doc if isinstance(doc, dict) else {}), path


def _from_helper(helper: str, server: str, config_path: str) -> dict[str, str] | None:
    import shutil
    import subprocess

    program = f"docker-credential-{helper}"
    if shutil.which(program) is None:
        raise SpecsError(
            f"{config_path} credential helper",
            helper,
            f"a helper on PATH ({program} is not); install it or run `docker login` again",
        )
    done = subprocess.run(
        [program, "get"], input=server, capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        return None  # the helper knows no credentials for this server
    try:
        found = json.loads(done.stdout)
        user, secret = str(found["Username"]), str(found["Secret"])
    except (ValueError, KeyError, TypeError):
        raise SpecsError(
            f"{program} get", server, "an answer of the credential-helper protocol"
        ) from None
    if user == "<token>":
        return {"identitytoken": secret}
    return {"username": user, "password": secret}


def _candidates(key: str) -> list[str]:
    bare = key.removeprefix("https://").removeprefix("http://").rstrip("/")
    return [key, bare, f"https://{bare}", f"http://{bare}"]


def credentials(registry: str, env: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """The stored credentials for ``registry``, or None when there are none."""
    env = os.environ if env is None else env
    key = INDEX_SERVER if registry == "docker.io" else registry
    config, path = _config(env)
    helpers = config.get("credHelpers") or {}
    helper = helpers.get(key) or helpers.get(registry) or config.get("credsStore")
    if helper:
        found = _from_helper(str(helper), key, path)
        if found is not None:
            return found
    auths = config.get("auths") or {}
    for name in _candidates(key):
        entry = auths.get(name)
        if not isinstance(entry, dict):
            continue
        if entry.get("identitytoken"):
            return {"identitytoken": str(entry["identitytoken"])}
        if entry.get("auth"):
            try:
                user, _, password = base64.b64decode(entry["auth"]).decode().partition(":")
            except ValueError:
                raise SpecsError(
                    f"{path} auths[{name!r}].auth",
                    "<hidden>",
                    "base64 of user:password; run `docker login` again",
                ) from None
            return {"username": user, "password": password}
    return None


def auth_header(image: str, env: Mapping[str, str] | None = None) -> str:
    """The ``X-Registry-Auth`` value for pulling or pushing ``image`` (``e30=``: none)."""
    registry = registry_of(image)
    found = credentials(registry, env)
    payload: dict[str, str] = {}
    if found is not None:
        payload = {**found, "serveraddress": INDEX_SERVER if registry == "docker.io" else registry}
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()
