"""kubernetes: a request the server took but never answered.

A create that got no answer may still have made its object: submit deletes it along with the
objects made before it, and says the request was sent, not that the server was unreachable.
A read that timed out is not sent again; one whose connection was dropped is, once. Listing
apps pages through Jobs and pods, and a user who may not list pods still gets the Jobs'
state. The fake API server is a stdlib HTTP server on loopback; no cluster is needed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any

import pytest

from torchx.schedulers import _kubernetes_client
from torchx.schedulers._errors import SchedulerError
from torchx.schedulers._kubernetes_manifests import LABEL_APP_ID, LABEL_APP_NAME, LABEL_MANAGED
from torchx.schedulers.kubernetes_scheduler import KubernetesApiError, KubernetesScheduler
from torchx.specs import AppDef, AppState, Role

kubernetes = pytest.importorskip("kubernetes")


class _FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str, str]] = []
        self.queries: list[str] = []
        self.hold = threading.Event()  # set at teardown: held requests end
        # How many POSTs are answered; the connection of each later one is closed unanswered.
        self.answer_posts = 0
        self.hold_deletes = False  # DELETEs get no answer until teardown
        # GET path -> its answers in turn: (status, body), or None to close the connection
        # unanswered. A GET of another path is held until teardown.
        self.answers: dict[str, list[tuple[int, dict[str, Any]] | None]] = {}


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
        self.server.queries.append(self.path.partition("?")[2])
        return body

    def do_POST(self) -> None:
        body = self._record()
        posts = sum(1 for m, _ in self.server.seen if m == "POST")
        if posts <= self.server.answer_posts:
            self._reply(201, json.loads(body))
        else:
            self.close_connection = True  # taken, never answered

    def do_DELETE(self) -> None:
        self._record()
        if self.server.hold_deletes:
            self.server.hold.wait(60)
        else:
            self._reply(200, {"kind": "Status", "status": "Success"})

    def do_GET(self) -> None:
        self._record()
        answers = self.server.answers.get(self.path.split("?")[0])
        if not answers:
            self.server.hold.wait(60)
            return
        answer = answers.pop(0)
        if answer is None:
            self.close_connection = True
        else:
            self._reply(*answer)


@pytest.fixture
def fake_server() -> Iterator[_FakeServer]:
    srv = _FakeServer()
    t = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
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
    assert info.value.sent and "the connection closed before an answer" in str(info.value)
    assert "may be left" not in str(info.value)
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
    assert "closed before an answer" in text and "may have taken effect" in text
    assert "kubectl or torchx list" in text


def test_unanswered_rollback_does_not_stop_the_older_deletes(
    fake_server: _FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The short wait applies to the held DELETEs alone: every other request is answered.
    monkeypatch.setattr(_kubernetes_client, "ROLLBACK_READ_TIMEOUT_S", 0.5)
    fake_server.answer_posts = 1
    fake_server.hold_deletes = True
    app = AppDef("a", roles=[Role("t", image="busybox", entrypoint="true", num_replicas=2)])
    with pytest.raises(KubernetesApiError) as info:
        _scheduler(fake_server).submit(app, {"namespace": "ns", "api": "batch"})
    text = str(info.value)
    deletes = [p for m, p in fake_server.seen if m == "DELETE"]
    assert "/jobs/" in deletes[0] and "/services/" in deletes[-1], fake_server.seen
    job, service = deletes[0].rsplit("/", 1)[-1], deletes[-1].rsplit("/", 1)[-1]
    # The create's own error, still worded as sent, naming what may be left and how to go.
    assert info.value.sent and "sent a POST request" in text and "\n" not in text
    assert f"may be left: job/{job} service/{service}" in text
    assert f"kubectl delete -n ns job/{job} service/{service}" in text


def test_read_timeout_is_not_retried(
    fake_server: _FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The one request of this test is never answered: a short read timeout is enough.
    monkeypatch.setattr(_kubernetes_client, "READ_TIMEOUT_S", 0.5)
    sched = _scheduler(fake_server)
    with pytest.raises(RuntimeError, match=r"unreachable .*Read timed out"):
        kubernetes.client.BatchV1Api(sched._client()).list_namespaced_job("ns")
    assert [m for m, _ in fake_server.seen] == ["GET"]


def test_read_whose_connection_was_dropped_is_sent_again(fake_server: _FakeServer) -> None:
    fake_server.answers = {"/apis/batch/v1/namespaces/ns/jobs": [None, (200, _job_list([], None))]}
    sched = _scheduler(fake_server)
    jobs = kubernetes.client.BatchV1Api(sched._client()).list_namespaced_job("ns")
    assert jobs.items == [] and [m for m, _ in fake_server.seen] == ["GET", "GET"]


def test_paging_stops_on_a_repeated_token() -> None:
    calls: list[object] = []

    def list_call(**kw: Any) -> Any:
        calls.append(kw["_continue"])
        return SimpleNamespace(items=[1], metadata=SimpleNamespace(_continue="same"))

    with pytest.raises(SchedulerError, match="continue token 'same' twice"):
        list(_kubernetes_client.paged(list_call))
    assert calls == [None, "same"]


def test_custom_resource_pages_are_plain_dicts() -> None:
    """A custom resource's list call answers the server's JSON: its pages are followed by
    their ``metadata.continue`` token, and a repeated one is refused as a model's is."""
    tokens = iter(["a", "b", None])
    pages = [{"items": [i], "metadata": {"continue": t} if t else {}} for i, t in enumerate(tokens)]
    assert list(_kubernetes_client.paged(lambda **kw: pages.pop(0))) == [0, 1, 2]
    same = {"items": [1], "metadata": {"continue": "same"}}
    with pytest.raises(SchedulerError, match="continue token 'same' twice"):
        list(_kubernetes_client.paged(lambda **kw: same))


def test_paging_stops_at_the_page_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_kubernetes_client, "MAX_PAGES", 3)
    tokens = iter(range(100))

    def list_call(**kw: Any) -> Any:
        return SimpleNamespace(items=[1], metadata=SimpleNamespace(_continue=str(next(tokens))))

    with pytest.raises(SchedulerError, match="more than 3 pages") as info:
        list(_kubernetes_client.paged(list_call))
    assert "\n" not in str(info.value)


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


def _job(name: str, done: bool) -> dict[str, Any]:
    labels = {LABEL_MANAGED: "torchx", LABEL_APP_ID: name, LABEL_APP_NAME: "a"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"{name}-t-0", "namespace": "ns", "labels": labels},
        "status": {"conditions": [{"type": "Complete", "status": "True"}]}
        if done
        else {"active": 1},
    }


def _job_list(items: list[dict[str, Any]], token: str | None) -> dict[str, Any]:
    return {
        "kind": "JobList",
        "apiVersion": "batch/v1",
        "items": items,
        "metadata": {"continue": token},
    }


def test_list_pages_through_jobs_and_keeps_their_state_without_pods(
    fake_server: _FakeServer,
) -> None:
    not_found = {"kind": "Status", "code": 404, "status": "Failure", "message": "no CRD"}
    forbidden = {
        "kind": "Status",
        "code": 403,
        "status": "Failure",
        "message": 'pods is forbidden: User "u" cannot list resource "pods"',
    }
    fake_server.answers = {
        "/apis/batch.volcano.sh/v1alpha1/jobs": [(404, not_found)],
        "/apis/batch/v1/jobs": [
            (200, _job_list([_job("a-1", True)], "page2")),
            (200, _job_list([_job("a-2", False)], None)),
        ],
        "/api/v1/pods": [(403, forbidden)],
    }
    apps = _scheduler(fake_server).list()
    assert [(a.app_id, a.state) for a in apps] == [
        ("ns:a-1", AppState.SUCCEEDED),
        ("ns:a-2", AppState.RUNNING),
    ]
    paths = [p for _, p in fake_server.seen]
    lists = [q for p, q in zip(paths, fake_server.queries, strict=True) if "volcano" not in p]
    assert all(f"limit={_kubernetes_client.PAGE_SIZE}" in q for q in lists), lists
    assert "continue=page2" in lists[1] and len(lists) == 3
