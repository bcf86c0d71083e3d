"""What ``torchx.apps.serve.serve`` (the program of ``serve.torchserve``) does: register a
model archive with TorchServe.

``POST {management_api}/models?url=MODEL_URL&k=v...``. A model that is not already at an
http(s) URL is copied (through fsspec) into a temporary directory and served from there
over HTTP while TorchServe downloads it.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import posixpath
import socket
import sys
import tempfile
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator


def registration_url(management_api: str, model_url: str, params: dict[str, str]) -> str:
    query = urllib.parse.urlencode({"url": model_url, **params})
    return f"{management_api.rstrip('/')}/models?{query}"


def _served_name(model_path: str) -> str:
    return posixpath.basename(model_path.rstrip("/")) or "model.mar"


def served_url(model_path: str, host: str, port: int) -> str:
    """The URL ``serve_file`` serves its copy of ``model_path`` at."""
    return f"http://{host}:{port}/{urllib.parse.quote(_served_name(model_path))}"


@contextlib.contextmanager
def serve_file(model_path: str, port: int, host: str | None = None) -> Iterator[str]:
    """Serve a copy of ``model_path`` over HTTP; yields its URL."""
    from torchx.components._copy import copy

    with tempfile.TemporaryDirectory(prefix="torchx_serve_") as tmp:
        copy(model_path, os.path.join(tmp, _served_name(model_path)))

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a: object, **kw: object) -> None:
                super().__init__(*a, directory=tmp, **kw)  # type: ignore[arg-type]

            def log_message(self, format: str, *args: object) -> None:
                print("model server:", format % args, file=sys.stderr)

        server = http.server.ThreadingHTTPServer(("", port), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield served_url(model_path, host or socket.getfqdn(), server.server_address[1])
        finally:
            server.shutdown()
            server.server_close()


def register(
    management_api: str, model_url: str, params: dict[str, str], timeout: float = 600
) -> str:
    """Send the registration; returns TorchServe's answer."""
    request = urllib.request.Request(
        registration_url(management_api, model_url, params), method="POST"
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: bytes = response.read()
    return body.decode("utf-8", "replace")
