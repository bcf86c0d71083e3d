"""Register a model archive with a TorchServe management API.

``python -m torchx.apps.serve.serve --model_path URL --management_api URL [--port N]
[--model_name ...] [--handler ...] ...`` copies the model (any fsspec URL) into a
temporary folder, serves it over HTTP on ``--port`` while TorchServe downloads it, and
POSTs the registration with the TorchServe parameters given.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import os
import socket
import sys
import urllib.error
import urllib.parse
from collections.abc import Sequence

from torchx.components._torchserve_upload import (
    register,
    registration_url,
    serve_file,
    served_url,
)

# The registration parameters of TorchServe's management API that may be passed through.
TORCHSERVE_PARAMS = (
    "model_name",
    "handler",
    "runtime",
    "batch_size",
    "max_batch_delay",
    "initial_workers",
    "synchronous",
    "response_timeout",
)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m torchx.apps.serve.serve",
        description="registers a model archive with TorchServe",
    )
    parser.add_argument("--model_path", type=str, required=True, help="fsspec URL of the model")
    parser.add_argument(
        "--management_api", type=str, required=True, help="e.g. http://localhost:8081"
    )
    parser.add_argument("--timeout", type=int, default=60, help="seconds per API request")
    parser.add_argument("--dryrun", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--port", type=int, default=8222, help="port the model is served on for TorchServe"
    )
    for param in TORCHSERVE_PARAMS:
        parser.add_argument(f"--{param}", type=str, help=f"TorchServe's {param}")
    return parser.parse_args(list(argv))


def get_routable_ip_to(addr: str) -> str:
    """The local IP address this host uses to reach URL ``addr`` (no packet is sent:
    connecting a UDP socket only picks the route)."""
    parsed = urllib.parse.urlparse(addr)
    if not parsed.hostname:
        raise ValueError(f"management API: got {addr!r}; expected a URL such as http://host:8081")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((parsed.hostname, parsed.port or 80))
        return str(s.getsockname()[0])


def rand_id() -> str:
    """``<user>_<16 hex digits>``: a name for the served copy of the model."""
    return f"{getpass.getuser()}_{os.urandom(8).hex()}"


def main(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    params = {p: getattr(args, p) for p in TORCHSERVE_PARAMS if getattr(args, p) is not None}
    if args.dryrun:
        # The request that would be sent; a model served from here gets its URL at run time.
        model_url = args.model_path
        if not model_url.startswith(("http://", "https://")):
            model_url = served_url(model_url, socket.getfqdn(), args.port)
        print(f"POST {registration_url(args.management_api, model_url, params)}")
        print("App serve started successfully")
        return
    with contextlib.ExitStack() as stack:
        if args.model_path.startswith(("http://", "https://")):
            model_url = args.model_path
        else:
            host = get_routable_ip_to(args.management_api)
            model_url = stack.enter_context(serve_file(args.model_path, args.port, host))
        print(f"POST {registration_url(args.management_api, model_url, params)}")
        try:
            print(_register(args.management_api, model_url, params, args.timeout))
        except _Refused as e:
            print(f"torchserve refused the model: HTTP {e.status}: {e.detail}", file=sys.stderr)
            sys.exit(1)
        except _Unreachable as e:
            print(f"cannot reach {args.management_api}: {e}", file=sys.stderr)
            sys.exit(1)


class _Refused(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(status, detail)
        self.status, self.detail = status, detail


class _Unreachable(Exception):
    pass


def _register(management_api: str, model_url: str, params: dict[str, str], timeout: int) -> str:
    """POST the registration with ``requests`` (as 0.7 did, so code that patches
    ``requests.post`` sees the call) when it is installed, else with the standard library."""
    import importlib

    try:
        # Imported by name: requests ships no type information, and is optional here.
        requests = importlib.import_module("requests")
    except ImportError:
        try:
            return register(management_api, model_url, params, timeout=timeout)
        except urllib.error.HTTPError as e:
            raise _Refused(e.code, e.read().decode("utf-8", "replace")) from None
        except urllib.error.URLError as e:
            raise _Unreachable(str(e.reason)) from None
    try:
        response = requests.post(
            f"{management_api.rstrip('/')}/models",
            params={"url": model_url, **params},
            timeout=timeout,
        )
    except requests.RequestException as e:
        raise _Unreachable(str(e)) from None
    if response.status_code >= 400:
        raise _Refused(response.status_code, response.text)
    return str(response.text)


if __name__ == "__main__":
    main(sys.argv[1:])
