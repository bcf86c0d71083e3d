"""Pulls and pushes through a registry that needs credentials, as ``docker login`` stores them."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from torchx.schedulers import SchedulerError
from torchx.schedulers.docker_scheduler import DockerScheduler, _registry_of
from torchx.specs import AppDef, AppState, Role, SpecsError

if TYPE_CHECKING:
    from conftest import OnPath

HOST = {"network": "host", "shm_size": "64m"}


@pytest.mark.parametrize(
    ("image", "registry"),
    [
        ("busybox", "docker.io"),
        ("me/app:1.0", "docker.io"),
        ("localhost/app", "localhost"),
        ("127.0.0.1:5000/me/ws:abc", "127.0.0.1:5000"),
        ("127.0.0.1:5000/me/ws", "127.0.0.1:5000"),
        ("ghcr.io/o/i@sha256:" + "a" * 64, "ghcr.io"),
    ],
)
def test_the_registry_docker_login_is_told_about(image: str, registry: str) -> None:
    assert _registry_of(image) == registry


# -- a real engine and a registry that needs credentials --------------------------------


@pytest.fixture
def sched(docker_engine: Any) -> Any:
    s = DockerScheduler("reg", base_url=docker_engine.base_url)
    yield s
    s.close()


@pytest.fixture
def docker_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty docker client configuration directory (no login yet), in DOCKER_CONFIG."""
    config = tmp_path / "docker-config"
    config.mkdir()
    monkeypatch.setenv("DOCKER_CONFIG", str(config))
    return config


def _untag(engine: Any, image: str) -> None:
    import docker

    api = docker.APIClient(base_url=engine.base_url)
    with contextlib.suppress(docker.errors.ImageNotFound):
        api.remove_image(image)
    api.close()


def test_workspace_pushed_to_image_repo_then_pulled_back(
    sched: DockerScheduler,
    docker_engine: Any,
    docker_registry: Any,
    docker_config: Path,
    tmp_path: Path,
) -> None:
    docker_registry.write_login(docker_config)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "main.sh").write_text("echo pushed-and-pulled\n")
    repo = f"{docker_registry.host}/me/ws"
    app = AppDef(
        "ws", roles=[Role("r", image=docker_engine.image, entrypoint="sh", args=["main.sh"])]
    )
    app, cfg = sched.with_workspace(app, {**HOST, "image_repo": repo}, str(ws))
    app_id = sched.submit(app, cfg)  # pushes the workspace image before the app starts
    desc = sched.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    tag = app.roles[0].image.partition(":")[2]
    assert docker_registry.tags("me/ws") == [tag]

    # Another machine: the engine lacks the image, so running it pulls it with the login.
    pushed = f"{repo}:{tag}"
    _untag(docker_engine, pushed)
    again = AppDef("pull", roles=[Role("r", image=pushed, entrypoint="sh", args=["main.sh"])])
    app_id = sched.submit(again, HOST)
    desc = sched.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert list(sched.log_iter(app_id, "r", 0)) == ["pushed-and-pulled\n"]


def test_a_credential_helper_is_asked(
    sched: DockerScheduler,
    docker_engine: Any,
    docker_registry: Any,
    docker_config: Path,
    tmp_path: Path,
    on_path: OnPath,
) -> None:
    asked = tmp_path / "asked"
    # The helper protocol: the server on stdin, a JSON answer on stdout.
    on_path(
        "docker-credential-torchxtest",
        f'read server; echo "$server" >> {asked}\n'
        f'echo \'{{"ServerURL": "\'$server\'", "Username": "{docker_registry.user}", '
        f'"Secret": "{docker_registry.password}"}}\'\n',
    )
    (docker_config / "config.json").write_text(
        json.dumps({"credHelpers": {docker_registry.host: "torchxtest"}})
    )
    sched.push_images({docker_engine.image: (f"{docker_registry.host}/me/helper", "1")})
    assert docker_registry.tags("me/helper") == ["1"]
    assert asked.read_text().split() == [docker_registry.host]


def test_without_credentials_push_and_pull_are_refused_clearly(
    sched: DockerScheduler,
    docker_engine: Any,
    docker_registry: Any,
    docker_config: Path,  # no config.json: no login
) -> None:
    before = docker_registry.refused
    with pytest.raises(SchedulerError) as e:
        sched.push_images({docker_engine.image: (f"{docker_registry.host}/me/nologin", "1")})
    text = str(e.value)
    assert "image_repo" in text and f"docker login {docker_registry.host}" in text
    image = f"{docker_registry.host}/me/absent:1"
    app = AppDef("nologin", roles=[Role("r", image=image, entrypoint="true")])
    info = sched.submit_dryrun(app, HOST)
    with pytest.raises(SpecsError) as e:
        sched.schedule(info)
    text = str(e.value)
    assert "role 'r' image" in text and "pulling failed" in text and "docker login" in text
    assert docker_registry.refused > before  # the registry did ask for credentials
    assert sched.describe(info.request.app_id) is None


def test_a_missing_credential_helper_is_one_error_naming_it(
    sched: DockerScheduler,
    docker_engine: Any,
    docker_registry: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"credsStore": "torchxabsent"}))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    repo = f"{docker_registry.host}/me/nohelper"
    with pytest.raises(SchedulerError) as e:
        sched.push_images({docker_engine.image: (repo, "1")})
    text = str(e.value)
    assert "\n" not in text and "image_repo" in text
    assert "docker-credential-torchxabsent" in text and "credsStore" in text
    assert docker_registry.tags("me/nohelper") == []
    # A pull asks the same helper, and says so the same way, before any container exists.
    app = AppDef("nohelper", roles=[Role("r", image=f"{repo}:2", entrypoint="true")])
    info = sched.submit_dryrun(app, HOST)
    with pytest.raises(SchedulerError) as e:
        sched.schedule(info)
    text = str(e.value)
    assert "\n" not in text and "docker-credential-torchxabsent" in text
    assert sched.describe(info.request.app_id) is None
