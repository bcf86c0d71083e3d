"""The stdlib Engine-API client: finding the engine, HTTP details, TLS and contexts."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers._docker_engine import (
    DEFAULT_HOST,
    Endpoint,
    Engine,
    EngineError,
    EngineUnreachable,
    NotFound,
    _frames,
    path_quote,
    resolve_endpoint,
)
from torchx.schedulers.docker_scheduler import DockerScheduler
from torchx.specs import AppDef, AppState, Role, SpecsError

HOST = {"network": "host", "shm_size": "64m"}


def _write_context(config: Path, name: str, host: str, tls: Path | None = None) -> None:
    """A context as ``docker context create`` stores it."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    meta = config / "contexts" / "meta" / digest
    meta.mkdir(parents=True)
    doc = {"Name": name, "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": False}}}
    (meta / "meta.json").write_text(json.dumps(doc))
    if tls is not None:
        dst = config / "contexts" / "tls" / digest / "docker"
        dst.mkdir(parents=True)
        for f in ("ca.pem", "cert.pem", "key.pem"):
            (dst / f).write_bytes((tls / f).read_bytes())


# -- finding the engine -----------------------------------------------------------------


def test_default_socket_without_host_or_context(tmp_path: Path) -> None:
    ep = resolve_endpoint({"DOCKER_CONFIG": str(tmp_path)})
    assert (ep.host, ep.tls) == (DEFAULT_HOST, None)


def test_docker_host_wins_over_the_current_context(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"currentContext": "other"}')
    ep = resolve_endpoint({"DOCKER_CONFIG": str(tmp_path), "DOCKER_HOST": "unix:///x.sock"})
    assert (ep.host, ep.source) == ("unix:///x.sock", "DOCKER_HOST")


def test_tls_files_come_from_docker_cert_path(tmp_path: Path) -> None:
    for f in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / f).write_text("x")
    env = {
        "DOCKER_HOST": "tcp://h:2376",
        "DOCKER_TLS_VERIFY": "1",
        "DOCKER_CERT_PATH": str(tmp_path),
    }
    tls = resolve_endpoint(env).tls
    assert tls is not None and tls.verify
    assert (tls.ca, tls.cert, tls.key) == tuple(
        str(tmp_path / f) for f in ("ca.pem", "cert.pem", "key.pem")
    )
    assert resolve_endpoint({"DOCKER_HOST": "tcp://h:2375"}).tls is None


def test_current_context_and_docker_context(tmp_path: Path) -> None:
    _write_context(tmp_path, "desktop", "unix:///home/me/.docker/desktop/docker.sock")
    _write_context(tmp_path, "ci", "unix:///run/ci.sock")
    (tmp_path / "config.json").write_text('{"currentContext": "desktop"}')
    env = {"DOCKER_CONFIG": str(tmp_path)}
    assert resolve_endpoint(env).host == "unix:///home/me/.docker/desktop/docker.sock"
    assert resolve_endpoint({**env, "DOCKER_CONTEXT": "ci"}).host == "unix:///run/ci.sock"
    assert resolve_endpoint({**env, "DOCKER_CONTEXT": "default"}).host == DEFAULT_HOST


def test_unknown_context_names_it_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(SpecsError) as e:
        resolve_endpoint({"DOCKER_CONFIG": str(tmp_path), "DOCKER_CONTEXT": "gone"})
    text = str(e.value)
    assert "DOCKER_CONTEXT" in text and "'gone'" in text and "docker context ls" in text


def test_ssh_hosts_are_refused_with_a_way_out() -> None:
    with pytest.raises(SpecsError) as e:
        Engine(Endpoint("ssh://me@box", None, "DOCKER_HOST"))
    text = str(e.value)
    assert "DOCKER_HOST" in text and "ssh://me@box" in text and "ssh -NL" in text


def test_path_segments_are_quoted() -> None:
    assert path_quote("localhost:5000/org/img:1.0") == "localhost%3A5000%2Forg%2Fimg%3A1.0"


def test_log_frames_split_across_reads() -> None:
    def frame(stream: int, data: bytes) -> bytes:
        return bytes([stream, 0, 0, 0]) + len(data).to_bytes(4, "big") + data

    raw = frame(1, b"out\n") + frame(2, b"err\n") + frame(1, b"")
    pieces = [raw[:3], raw[3:13], raw[13:]]
    assert list(_frames(iter(pieces))) == [(1, b"out\n"), (2, b"err\n"), (1, b"")]


# -- HTTP details against a scripted server on 127.0.0.1 ----------------------------------


class _Scripted:
    """Answers each request with the next canned response; records what it was sent."""

    def __init__(self, answers: list[bytes], close_after_each: bool) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.connections = 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.close_after_each = close_after_each
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.answers:
            conn, _ = self.server.accept()
            self.connections += 1
            with conn, conn.makefile("rb") as f:
                while self.answers:
                    head = b""
                    while not head.endswith(b"\r\n\r\n"):
                        line = f.readline()
                        if not line:
                            break
                        head += line
                    if not head:
                        break
                    self.requests.append(head)
                    conn.sendall(self.answers.pop(0))
                    if self.close_after_each:
                        break

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def scripted() -> Iterator[Any]:
    made: list[_Scripted] = []

    def make(answers: list[bytes], close_after_each: bool = False) -> _Scripted:
        made.append(_Scripted(answers, close_after_each))
        return made[-1]

    yield make
    for s in made:
        s.close()


def _engine(port: int) -> Engine:
    return Engine(Endpoint(f"tcp://127.0.0.1:{port}", None, "DOCKER_HOST"))


def test_keep_alive_chunked_and_errors(scripted: Any) -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n[1,\r\n2\r\n2]\r\n0\r\n\r\n"
    )
    missing = b'HTTP/1.1 404 Not Found\r\nContent-Length: 24\r\n\r\n{"message":"no such x"}\n'
    empty = b"HTTP/1.1 204 No Content\r\n\r\n"
    server = scripted([chunked, missing, empty])
    engine = _engine(server.port)
    assert engine.request("GET", "/a", {"all": True, "filters": {"label": ["k=v"]}}) == [1, 2]
    with pytest.raises(NotFound) as e:
        engine.request("GET", "/b")
    assert e.value.status == 404 and "no such x" in str(e.value)
    assert engine.request("POST", "/c", body={"x": 1}) is None
    assert server.connections == 1  # one connection kept alive for all three
    first = server.requests[0].decode()
    assert first.startswith("GET /a?all=1&filters=%7B%22label%22%3A%5B%22k%3Dv%22%5D%7D HTTP/1.1")
    assert "Content-Length: 7" in server.requests[2].decode()


def test_a_connection_the_engine_closed_is_replaced(scripted: Any) -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    server = scripted([ok, ok], close_after_each=True)
    engine = _engine(server.port)
    assert engine.request("GET", "/one") == {}
    assert engine.request("GET", "/two") == {}
    assert server.connections == 2


def test_refused_connection_names_the_engine_and_the_fix() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EngineUnreachable) as e:
        _engine(port).request("GET", "/version")
    text = str(e.value)
    assert f"tcp://127.0.0.1:{port}" in text and "DOCKER_HOST" in text and "Start dockerd" in text


# -- a real engine over a context and over TCP with TLS -----------------------------------


def _echo(sched: DockerScheduler, image: str, text: str) -> None:
    app = AppDef("e", roles=[Role("r", image=image, entrypoint="echo", args=[text])])
    app_id = sched.submit(app, HOST)
    desc = sched.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert list(sched.log_iter(app_id, "r", 0)) == [f"{text}\n"]


def test_the_current_context_reaches_the_engine(
    docker_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_context(tmp_path, "mine", docker_engine.base_url)
    (tmp_path / "config.json").write_text('{"currentContext": "mine"}')
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.delenv("DOCKER_CONTEXT", raising=False)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    sched = DockerScheduler("ctx")
    try:
        _echo(sched, docker_engine.image, "through-a-context")
    finally:
        sched.close()


def test_tls_engine_with_client_certificates(
    docker_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if docker_engine.tls_url is None:
        pytest.skip("the engine has no TLS listener (no openssl CLI to make certificates)")
    monkeypatch.setenv("DOCKER_HOST", docker_engine.tls_url)
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(docker_engine.tls_certs))
    sched = DockerScheduler("tls")
    try:
        _echo(sched, docker_engine.image, "over-tls")
    finally:
        sched.close()


def test_tls_engine_without_our_certificates_is_a_clear_error(
    docker_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if docker_engine.tls_url is None:
        pytest.skip("the engine has no TLS listener (no openssl CLI to make certificates)")
    monkeypatch.setenv("DOCKER_HOST", docker_engine.tls_url)
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(tmp_path))  # empty: the system CAs only
    with pytest.raises(EngineUnreachable) as e:
        DockerScheduler("tls").describe("x-1")
    assert "DOCKER_CERT_PATH" in str(e.value) and docker_engine.tls_url in str(e.value)


def test_engine_errors_carry_the_engines_message(docker_engine: Any) -> None:
    engine = Engine.from_env(docker_engine.base_url)
    with pytest.raises(EngineError) as e:
        engine.request("POST", "/containers/create", body={"Image": "no-such-image:404"})
    assert e.value.status == 404 and "no-such-image" in e.value.message


def test_tls_engine_spoken_to_in_plain_http_says_how_to_turn_tls_on(
    docker_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if docker_engine.tls_url is None:
        pytest.skip("the engine has no TLS listener (no openssl CLI to make certificates)")
    monkeypatch.setenv("DOCKER_HOST", docker_engine.tls_url)
    monkeypatch.delenv("DOCKER_TLS_VERIFY", raising=False)
    with pytest.raises(EngineUnreachable) as e:
        DockerScheduler("plain").describe("x-1")
    text = str(e.value)
    assert "DOCKER_HOST" in text and "DOCKER_TLS_VERIFY=1" in text
