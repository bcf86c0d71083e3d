"""Whether an MLflow tracking server accepts connections, checked before MLflow is used.

MLflow's client retries a refused connection with backoff for minutes per request, so a
mistyped host or port would hold an app that long before any error. This check retries
too, but only until a short deadline: a server started at the same time as the app (a
sibling role) gets that long to come up, a wrong URI fails within it in one line.
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.parse

from ._errors import TrackerConfigError

# The whole check (name lookup and every connection attempt) ends within this many seconds.
SERVER_CONNECT_TIMEOUT_S = 10.0
# Pauses between rounds of connection attempts: short at first, at most _MAX_PAUSE_S.
_FIRST_PAUSE_S = 0.1
_MAX_PAUSE_S = 1.0
_FIELD = "mlflow tracking_uri"


def check_server_reachable(uri: str) -> None:
    """Raise TrackerConfigError unless something accepts connections at an http(s) ``uri``.

    Other URIs (file, sqlite, databases) are left to MLflow, and so is a URI that
    requests (MLflow's HTTP client) would reach through a proxy named by the environment:
    the server may be reachable only through it.
    """
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return
    port = _port_of(uri, parts)
    if _proxied(uri):
        return
    host = parts.hostname
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    deadline = time.monotonic() + SERVER_CONNECT_TIMEOUT_S
    addresses = _resolve(uri, host, port, where, deadline)
    pause = _FIRST_PAUSE_S
    while True:
        error = _connect_any(addresses, deadline)
        if error is None:
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise TrackerConfigError(
                _FIELD,
                uri,
                f"no server accepted a connection at {where} within"
                f" {SERVER_CONNECT_TIMEOUT_S:g} s ({error.strerror or error});"
                " start the MLflow server or correct the URI",
            )
        _pause(min(pause, left))
        pause = min(pause * 2, _MAX_PAUSE_S)


def _pause(seconds: float) -> None:
    """Wait between connection rounds (a seam for tests to observe a retry)."""
    time.sleep(seconds)


def _port_of(uri: str, parts: urllib.parse.SplitResult) -> int:
    try:
        port = parts.port
    except ValueError:  # not a number, or over 65535
        port = 0
    if port is None:
        return 443 if parts.scheme == "https" else 80
    if not 0 < port < 65536:
        given = parts.netloc.rpartition("@")[2].rpartition("]")[2].partition(":")[2]
        raise TrackerConfigError(
            _FIELD, uri, f"its port {given!r} is not valid; give a port number 1-65535"
        )
    return port


def _proxied(uri: str) -> bool:
    """Whether requests would send a request for ``uri`` through a proxy.

    The same rules MLflow's requests session follows: the scheme's proxy variable or
    ALL_PROXY, unless NO_PROXY names the host.
    """
    # requests comes with mlflow (its HTTP client), which is imported before this runs.
    import requests.utils  # type: ignore[import-untyped,unused-ignore]

    proxies = requests.utils.get_environ_proxies(uri)
    return bool(requests.utils.select_proxy(uri, proxies))


def _resolve(
    uri: str, host: str, port: int, where: str, deadline: float
) -> list[tuple[int, int, int, tuple[object, ...]]]:
    """``host``'s addresses, or a TrackerConfigError; the lookup ends by ``deadline``.

    getaddrinfo has no timeout of its own, so it runs in a daemon thread waited on for
    the time left (a hung lookup then ends with the interpreter, not holding it).
    """
    found: list[list[tuple[int, int, int, tuple[object, ...]]]] = []
    failed: list[OSError] = []

    def lookup() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            found.append([(af, kind, proto, addr) for af, kind, proto, _, addr in infos])
        except OSError as e:
            failed.append(e)

    thread = threading.Thread(target=lookup, name="torchx-mlflow-lookup", daemon=True)
    thread.start()
    thread.join(max(deadline - time.monotonic(), 0.0))
    if found:
        return found[0]
    reason = (
        str(failed[0].strerror or failed[0])
        if failed
        else f"no answer within {SERVER_CONNECT_TIMEOUT_S:g} s"
    )
    raise TrackerConfigError(
        _FIELD,
        uri,
        f"cannot look up the host of {where} ({reason}); correct the host name",
    )


def _connect_any(
    addresses: list[tuple[int, int, int, tuple[object, ...]]], deadline: float
) -> OSError | None:
    """Connect to the first address that accepts; None then, else the last error."""
    error: OSError = OSError("no address to connect to")
    for family, kind, proto, address in addresses:
        left = deadline - time.monotonic()
        if left <= 0:
            return TimeoutError("timed out")
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(left)
                sock.connect(address)
            return None
        except OSError as e:
            error = e
    return error
