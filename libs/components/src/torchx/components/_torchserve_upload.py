"""The program behind ``serve.torchserve``: register a model archive with TorchServe.

``POST {management_api}/models?url=MODEL_URL&k=v...``. A model that is not already at an
http(s) URL is copied (through fsspec) into a temporary directory and served from there
over HTTP while TorchServe downloads it.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import os
import posixpath
import socket
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence


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


def _params(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--param: got {pair!r}; expected key=value")
        out[key] = value
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchx.components._torchserve_upload")
    parser.add_argument("--model_path", required=True)
    parser.add_argument("--management_api", required=True)
    parser.add_argument("--port", type=int, default=8222)
    parser.add_argument("--host", default=None, help="address TorchServe reaches this app at")
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--dryrun", action="store_true")
    ns = parser.parse_args(argv)
    params = _params(ns.param)

    with contextlib.ExitStack() as stack:
        if ns.model_path.startswith(("http://", "https://")):
            model_url = ns.model_path
        elif ns.dryrun:
            model_url = f"http://{ns.host or socket.getfqdn()}:{ns.port}/..."
        else:
            model_url = stack.enter_context(serve_file(ns.model_path, ns.port, ns.host))
        if ns.dryrun:
            print("POST", registration_url(ns.management_api, model_url, params))
            return 0
        try:
            print(register(ns.management_api, model_url, params))
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")
            print(f"torchserve refused the model: HTTP {e.code}: {detail}", file=sys.stderr)
            return 1
        except urllib.error.URLError as e:
            print(f"cannot reach {ns.management_api}: {e.reason}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
