"""kubernetes: a request the server took but never answered.

A create that got no answer may still have made its object: submit deletes it along with the
objects made before it, and says the request was sent, not that the server was unreachable.
A read that timed out is not sent again. The fake API server is a stdlib HTTP server on
loopback; no cluster is needed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from torchx.schedulers import _kubernetes_client
from torchx.schedulers.kubernetes_scheduler import KubernetesApiError, KubernetesScheduler
from torchx.specs import AppDef, Role

kubernetes = pytest.importorskip("kubernetes")


class _FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str, str]] = []
        self.hold = threading.Event()  # set at teardown: held requests end
        self.answer_posts = 0  # how many POSTs are answered before the rest are held


class _Handler(BaseHTTPRequestHandler):
    server: _FakeServer

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, code: int, obj: dict[str, Any]) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _record(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        self.server.seen.append((self.command, self.path.split("?")[0]))
        return body

    def do_POST(self) -> None:
        body = self._record()
        posts = sum(1 for m, _ in self.server.seen if m == "POST")
        if posts <= self.server.answer_posts:
            self._reply(201, json.loads(body))
        else:
            self.server.hold.wait(60)

    def do_DELETE(self) -> None:
        self._record()
        self._reply(200, {"kind": "Status", "status": "Success"})

    def do_GET(self) -> None:
        self._record()
        self.server.hold.wait(60)


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[_FakeServer]:
    monkeypatch.setattr(_kubernetes_client, "READ_TIMEOUT_S", 0.5)
    srv = _FakeServer()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.hold.set()
    srv.shutdown()
    srv.server_close()


def _scheduler(srv: _FakeServer) -> KubernetesScheduler:
    conf = kubernetes.client.Configuration()
    conf.host = f"http://127.0.0.1:{srv.server_port}"
    sched = KubernetesScheduler("torchx")
    # The client the scheduler makes from a kubeconfig, on the fake server's address.
    sched._api_client = _kubernetes_client.bounded_client(
        kubernetes, conf, lambda s, w: RuntimeError(f"unreachable {s}: {w}"), _sent_error
    )
    return sched


def _sent_error(server: str, method: str, why: str) -> KubernetesApiError:
    return KubernetesApiError(f"sent a {method} request to {server}; {why}", sent=True)


def test_unanswered_create_is_rolled_back_with_the_ones_before(fake_server: _FakeServer) -> None:
    fake_server.answer_posts = 1  # the Service is made; the Job's create is never answered
    app = AppDef("a", roles=[Role("t", image="busybox", entrypoint="true", num_replicas=2)])
    with pytest.raises(KubernetesApiError) as info:
        _scheduler(fake_server).submit(app, {"namespace": "ns", "api": "batch"})
    assert info.value.sent and "no answer in 0.5 s" in str(info.value)
    posts = [p for m, p in fake_server.seen if m == "POST"]
    deletes = [p for m, p in fake_server.seen if m == "DELETE"]
    assert [p.rsplit("/", 1)[-1] for p in posts] == ["services", "jobs"]
    # The Job whose create went unanswered is deleted first, then the Service.
    assert len(deletes) == 2, fake_server.seen
    assert "/jobs/" in deletes[0] and "/services/" in deletes[1]


def test_scheduler_words_an_unanswered_post_as_sent(
    fake_server: _FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = kubernetes.client.Configuration()
    conf.host = f"http://127.0.0.1:{fake_server.server_port}"
    monkeypatch.setattr(kubernetes.client, "Configuration", lambda: conf)
    monkeypatch.setattr(kubernetes.config, "load_incluster_config", lambda **kw: None)
    sched = KubernetesScheduler("torchx")
    with pytest.raises(KubernetesApiError) as info:
        sched._create("ns", {"kind": "Service", "apiVersion": "v1", "metadata": {"name": "s"}})
    text = str(info.value)
    assert info.value.sent and info.value.status is None
    assert "sent a POST request to the API server" in text and "cannot reach" not in text
    assert "no answer in 0.5 s" in text and "may have taken effect" in text
    assert "kubectl or torchx list" in text


def test_read_timeout_is_not_retried(fake_server: _FakeServer) -> None:
    sched = _scheduler(fake_server)
    with pytest.raises(RuntimeError, match="unreachable"):
        kubernetes.client.BatchV1Api(sched._client()).list_namespaced_job("ns")
    assert [m for m, _ in fake_server.seen] == ["GET"]


def test_followed_log_has_no_read_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    timeouts: list[object] = []

    def record(self: object, method: str, url: str, **kwargs: Any) -> None:
        timeouts.append(kwargs.get("_request_timeout"))

    monkeypatch.setattr(kubernetes.client.ApiClient, "request", record)
    client = _kubernetes_client.bounded_client(
        kubernetes, kubernetes.client.Configuration(), RuntimeError, _sent_error
    )
    client.request("GET", "http://127.0.0.1:1/log", _preload_content=False)
    client.request("GET", "http://127.0.0.1:1/log")
    client.request("GET", "http://127.0.0.1:1/log", _request_timeout=7)
    connect, read = _kubernetes_client.CONNECT_TIMEOUT_S, _kubernetes_client.READ_TIMEOUT_S
    assert timeouts == [(connect, None), (connect, read), 7]


def test_user_client_is_used_unchanged() -> None:
    conf = kubernetes.client.Configuration()
    before = conf.retries
    client = kubernetes.client.ApiClient(conf)
    sched = KubernetesScheduler("torchx", client=client)
    assert sched._client() is client
    assert type(client) is kubernetes.client.ApiClient and conf.retries == before
