"""Finding the engine as the docker CLI does, and one-line errors when it cannot be used."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from torchx.schedulers import SchedulerError
from torchx.schedulers._docker_client import DEFAULT_HOST, resolve_engine
from torchx.schedulers.docker_scheduler import DockerScheduler
from torchx.specs import AppDef, AppState, Role, SpecsError

if TYPE_CHECKING:
    from conftest import OnPath


def engine_error(sched: DockerScheduler) -> str:
    """The one-line error ``sched`` gives when asked about an app, its engine unusable."""
    with pytest.raises(SchedulerError) as e:
        sched.describe("x-1")
    text = str(e.value)
    assert "\n" not in text, text
    return text


HOST = {"network": "host", "shm_size": "64m"}


@pytest.fixture
def docker_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty docker config folder, and no engine settings from the caller's environment."""
    config = tmp_path / "docker-config"
    config.mkdir()
    (config / "config.json").write_text("{}")
    monkeypatch.setenv("DOCKER_CONFIG", str(config))
    for name in ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"):
        monkeypatch.delenv(name, raising=False)
    return config


def _docker_cli(*args: str) -> None:
    """The docker CLI itself, so contexts are stored exactly as users' are."""
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _echo(sched: DockerScheduler, image: str, text: str) -> None:
    app = AppDef("e", roles=[Role("r", image=image, entrypoint="echo", args=[text])])
    app_id = sched.submit(app, HOST)
    desc = sched.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert list(sched.log_iter(app_id, "r", 0)) == [f"{text}\n"]


def _echo_where_the_environment_points(session: str, image: str, text: str) -> None:
    """``_echo`` through a scheduler that finds its engine from the environment alone."""
    sched = DockerScheduler(session)
    try:
        _echo(sched, image, text)
    finally:
        sched.close()


# -- where the engine is ----------------------------------------------------------------


def test_default_socket_without_host_or_context(docker_config: Path) -> None:
    found = resolve_engine()
    assert (found.base_url, found.source, found.tls) == (DEFAULT_HOST, "the default socket", None)


def test_base_url_wins_then_docker_host(
    docker_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (docker_config / "config.json").write_text('{"currentContext": "other"}')
    monkeypatch.setenv("DOCKER_HOST", "unix:///x.sock")
    assert resolve_engine("tcp://127.0.0.1:1").source == "base_url"
    found = resolve_engine()
    assert (found.base_url, found.source) == ("unix:///x.sock", "DOCKER_HOST")


def test_contexts_made_by_the_docker_cli(
    docker_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _docker_cli("context", "create", "desktop", "--docker", "host=unix:///run/desktop.sock")
    _docker_cli("context", "create", "ci", "--docker", "host=tcp://127.0.0.1:2375")
    _docker_cli("context", "use", "desktop")
    found = resolve_engine()
    assert found.base_url == "unix:///run/desktop.sock"
    assert found.source == "the current Docker context 'desktop'"
    monkeypatch.setenv("DOCKER_CONTEXT", "ci")
    assert resolve_engine().base_url == "tcp://127.0.0.1:2375"
    monkeypatch.setenv("DOCKER_CONTEXT", "default")
    assert resolve_engine().base_url == DEFAULT_HOST


def test_unknown_context_names_the_setting_and_the_fix(
    docker_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_CONTEXT", "gone")
    with pytest.raises(SpecsError) as e:
        resolve_engine()
    text = str(e.value)
    assert text.startswith("DOCKER_CONTEXT: got 'gone'") and "docker context ls" in text


def test_ssh_host_resolves_and_dryruns_without_contacting_it(
    docker_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "ssh://me@127.0.0.1:2222")
    found = resolve_engine()
    assert (found.base_url, found.source, found.over_ssh) == (
        "ssh://me@127.0.0.1:2222",
        "DOCKER_HOST",
        True,
    )
    sched = DockerScheduler("ssh")
    app = AppDef("e", roles=[Role("r", image="busybox", entrypoint="echo", args=["hi"])])
    info = sched.submit_dryrun(app, HOST)
    assert f"POST /containers/create?name={info.request.app_id}-r-0 " in str(info)
    assert sched._address is None  # the dryrun never looked for an engine, let alone connected


def test_ssh_host_runs_through_the_sdks_ssh_transport(
    docker_config: Path,
    docker_engine: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    on_path: OnPath,
) -> None:
    """The SDK runs ``ssh [-p PORT] USER@HOST docker system dial-stdio`` as the docker CLI
    does. Here ``ssh`` is a stand-in that runs that docker command against the test engine
    (no ssh server on this machine); it records the arguments it was given."""
    seen = tmp_path / "ssh-args"
    on_path(
        "ssh",
        f'echo "$@" >> {seen}\nexec docker -H {docker_engine.base_url} system dial-stdio\n',
    )
    monkeypatch.setenv("DOCKER_HOST", "ssh://me@127.0.0.1:2222")
    sched = DockerScheduler("ssh")
    try:
        if importlib.util.find_spec("paramiko") is None:
            # The SDK's ssh transport lives in a module that imports paramiko.
            text = engine_error(sched)
            assert text.startswith(
                "local_docker: the Docker engine at ssh://me@127.0.0.1:2222 (from DOCKER_HOST)"
            )
            assert 'pip install "docker[ssh]"' in text
        else:
            _echo(sched, docker_engine.image, "over-ssh")
            first = seen.read_text().splitlines()[0]
            assert first == "-l me -p 2222 -- 127.0.0.1 docker system dial-stdio"
    finally:
        sched.close()


# -- a real engine over a context and over TCP with TLS -----------------------------------


@pytest.fixture
def tls_engine(docker_engine: Any) -> Any:
    if docker_engine.tls_url is None:
        pytest.skip("the engine has no TLS listener (no openssl CLI to make certificates)")
    return docker_engine


def test_the_current_context_reaches_the_engine(docker_config: Path, docker_engine: Any) -> None:
    _docker_cli("context", "create", "mine", "--docker", f"host={docker_engine.base_url}")
    _docker_cli("context", "use", "mine")
    _echo_where_the_environment_points("ctx", docker_engine.image, "through-a-context")


def test_a_tls_context_uses_its_certificates(
    docker_config: Path, tls_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker_engine = tls_engine
    certs = docker_engine.tls_certs
    endpoint = f"host={docker_engine.tls_url},ca={certs}/ca.pem,cert={certs}/cert.pem"
    _docker_cli("context", "create", "tls", "--docker", f"{endpoint},key={certs}/key.pem")
    monkeypatch.setenv("DOCKER_CONTEXT", "tls")
    _echo_where_the_environment_points("tlsctx", docker_engine.image, "through-a-tls-context")


def test_tls_engine_with_client_certificates(
    docker_config: Path, tls_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker_engine = tls_engine
    monkeypatch.setenv("DOCKER_HOST", docker_engine.tls_url)
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(docker_engine.tls_certs))
    # requests would let this bundle replace the engine's CA; the engine's CA must win.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(docker_engine.tls_certs / "cert.pem"))
    _echo_where_the_environment_points("tls", docker_engine.image, "over-tls")


def test_tls_engine_without_our_certificates_names_docker_cert_path(
    docker_config: Path, tls_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker_engine = tls_engine
    monkeypatch.setenv("DOCKER_HOST", docker_engine.tls_url)
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(tmp_path))  # no certificates there
    with pytest.raises(SpecsError) as e:
        DockerScheduler("tls").describe("x-1")
    text = str(e.value)
    assert text.startswith(f"DOCKER_CERT_PATH: got '{tmp_path}'") and "cert.pem" in text


def test_tls_engine_with_a_foreign_ca_names_the_fix(
    docker_config: Path, tls_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker_engine = tls_engine
    """Our client certificate, but a CA that did not sign the engine's: the handshake fails."""
    import shutil

    certs = tmp_path / "certs"
    certs.mkdir()
    for name in ("cert.pem", "key.pem"):
        shutil.copy(docker_engine.tls_certs / name, certs / name)
    shutil.copy(docker_engine.tls_certs / "cert.pem", certs / "ca.pem")  # not a CA of the engine
    monkeypatch.setenv("DOCKER_HOST", docker_engine.tls_url)
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(certs))
    text = engine_error(DockerScheduler("tls"))
    assert text.startswith(f"local_docker: the Docker engine at {docker_engine.tls_url} (from")
    assert "handshake failed" in text and "DOCKER_CERT_PATH" in text


def test_tls_engine_spoken_to_in_plain_http_says_how_to_turn_tls_on(
    docker_config: Path, tls_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker_engine = tls_engine
    monkeypatch.setenv("DOCKER_HOST", docker_engine.tls_url)
    text = engine_error(DockerScheduler("plain"))
    assert "(from DOCKER_HOST): it speaks TLS" in text and "DOCKER_TLS_VERIFY=1" in text
    assert "\n" not in text


def test_refused_connection_names_the_engine_and_the_fix(
    docker_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{port}")
    text = engine_error(DockerScheduler("gone"))
    assert text.startswith(f"local_docker: the Docker engine at tcp://127.0.0.1:{port} (from")
    assert "DOCKER_HOST" in text and "start dockerd" in text


def test_a_server_that_is_no_docker_engine_is_named_as_such(
    docker_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    # a plain web server (a wrong port): it has no /version
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(docker_config))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"tcp://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setenv("DOCKER_HOST", url)
        with pytest.raises(SchedulerError) as e:
            DockerScheduler("web").describe("x-1")
    finally:
        server.shutdown()
        server.server_close()
    text = str(e.value)
    assert text.startswith(f"local_docker: the Docker engine at {url} (from DOCKER_HOST): ")
    assert "not a Docker engine (HTTP 404 on /version)" in text, text
    assert "<" not in text and "\n" not in text


def test_a_docker_host_that_is_no_address_names_it_and_the_forms(
    docker_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "bogus")
    text = engine_error(DockerScheduler("bogus"))
    assert text.startswith("local_docker: the Docker engine at bogus (from DOCKER_HOST): ")
    assert "set DOCKER_HOST to unix://" in text, text
