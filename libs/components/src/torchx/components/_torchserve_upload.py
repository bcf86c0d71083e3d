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


@contextlib.contextmanager
def serve_file(model_path: str, port: int, host: str | None = None) -> Iterator[str]:
    """Serve a copy of ``model_path`` over HTTP; yields its URL."""
    from torchx.components._copy import copy

    with tempfile.TemporaryDirectory(prefix="torchx_serve_") as tmp:
        name = posixpath.basename(model_path.rstrip("/")) or "model.mar"
        copy(model_path, os.path.join(tmp, name))

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a: object, **kw: object) -> None:
                super().__init__(*a, directory=tmp, **kw)  # type: ignore[arg-type]

            def log_message(self, format: str, *args: object) -> None:
                print("model server:", format % args, file=sys.stderr)

        server = http.server.ThreadingHTTPServer(("", port), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            address = host or socket.getfqdn()
            yield f"http://{address}:{server.server_address[1]}/{urllib.parse.quote(name)}"
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
