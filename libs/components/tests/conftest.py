"""A stand-in for TorchServe's management API, for the serve component and program."""

from __future__ import annotations

import http.server
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest


class FakeManagementApi(http.server.BaseHTTPRequestHandler):
    """Answers POST /models like TorchServe, after downloading the model it is given."""

    seen: list[tuple[dict[str, list[str]], bytes]] = []  # noqa: RUF012

    def do_POST(self) -> None:
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        with urllib.request.urlopen(query["url"][0], timeout=30) as r:
            body = r.read()
        self.seen.append((query, body))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"status": "registered"}')

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def management_api() -> Iterator[str]:
    FakeManagementApi.seen.clear()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeManagementApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def registrations(management_api: str) -> list[tuple[dict[str, list[str]], bytes]]:
    """What the management API was sent: (query, downloaded model) per registration."""
    return FakeManagementApi.seen
