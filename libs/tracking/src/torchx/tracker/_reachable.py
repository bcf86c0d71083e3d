"""Whether an MLflow tracking server accepts connections, checked before MLflow is used.

MLflow's client retries a refused connection with backoff for minutes per request, so a
mistyped host or port would hold an app that long before any error. This check retries
too, but only until a short deadline: a server started at the same time as the app (a
sibling role) gets that long to come up and for its host name to appear, a wrong URI fails
within it in one line.
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
# The longest one connection attempt waits; a refused one ends at once, and the round
# is repeated until the deadline.
_ATTEMPT_TIMEOUT_S = 2.0
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
    pause = _FIRST_PAUSE_S
    failure = ""  # why the last round failed, as the error says it
    while True:
        # Looked up again each round: a sibling role's host name (its container's or its
        # pod's) may exist only once that role has started.
        found = _resolve(host, port, deadline)
        if isinstance(found, list):
            error = _connect_any(found, deadline)
            if error is None:
                return
            failure = (
                f"no server accepted a connection at {where} within"
                f" {SERVER_CONNECT_TIMEOUT_S:g} s ({error.strerror or error});"
                " start the MLflow server or correct the URI"
            )
        elif found is not None or not failure:  # else: time ran out; the last reason stands
            reason = (
                str(found.strerror or found)
                if found is not None
                else f"no answer within {SERVER_CONNECT_TIMEOUT_S:g} s"
            )
            failure = f"cannot look up the host of {where} ({reason}); correct the host name"
            if not _not_yet(found):
                raise TrackerConfigError(_FIELD, uri, failure)
        left = deadline - time.monotonic()
        if left > 0:
            _pause(min(pause, left))
        # Past the deadline, a lookup or connection would be given no time: it could only
        # replace the real reason with a timeout.
        if time.monotonic() >= deadline:
            raise TrackerConfigError(_FIELD, uri, failure)
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


_Addresses = list[tuple[int, int, int, tuple[object, ...]]]


def _resolve(host: str, port: int, deadline: float) -> _Addresses | OSError | None:
    """``host``'s addresses, the lookup's error, or None when it has not answered by
    ``deadline``.

    getaddrinfo has no timeout of its own, so it runs in a daemon thread waited on for
    the time left (a hung lookup then ends with the interpreter, not holding it).
    """
    found: list[_Addresses] = []
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
    return failed[0] if failed else None


def _not_yet(error: OSError | None) -> bool:
    """Whether a failed lookup may succeed later: the name is unknown as yet (a sibling
    role's container or pod not started) or the resolver could not answer for now."""
    return isinstance(error, socket.gaierror) and error.errno in (
        socket.EAI_NONAME,
        socket.EAI_AGAIN,
    )


def _connect_any(addresses: _Addresses, deadline: float) -> OSError | None:
    """Connect to the first address that accepts; None then, else the last error.

    Each attempt gets at most its share of the time left (and _ATTEMPT_TIMEOUT_S), so an
    address that never answers (a firewalled IPv6 address, a stale one) cannot use up the
    deadline before the others are tried.
    """
    error: OSError = OSError("no address to connect to")
    for tried, (family, kind, proto, address) in enumerate(addresses):
        left = deadline - time.monotonic()
        if left <= 0:
            return TimeoutError("timed out")
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(min(left / (len(addresses) - tried), _ATTEMPT_TIMEOUT_S))
                sock.connect(address)
            return None
        except OSError as e:
            error = e
    return error
