"""The kubernetes ``ApiClient`` torchx makes from a kubeconfig or a pod's service account.

The client library waits for ever on a server that accepts a connection and never answers,
and reports one it cannot reach as a urllib3 retry error naming no cluster. The client made
here bounds every call in time and turns "could not reach the server" into one line naming
the server, where its address came from and what to check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Seconds to open a connection (TCP and TLS handshake) and to wait for each read of an
# answer. A log that is followed has no read limit: its lines may be minutes apart.
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 120.0
# One more try after a failed connection, not urllib3's three: a server that is down is
# reported in seconds.
CONNECT_RETRIES = 1


def _why(error: Exception) -> str:
    """What went wrong reaching the server, in a few words."""
    import urllib3.exceptions as u3

    reason: Any = getattr(error, "reason", None) or error
    # urllib3's own words come last in its arguments, after the connection or pool.
    args = getattr(reason, "args", ())
    text = args[-1] if args and isinstance(args[-1], str) else str(reason)
    if isinstance(reason, u3.SSLError):
        return f"TLS: {text}"
    # "HTTPSConnectionPool(...): Read timed out. (read timeout=10)" -> what happened.
    return " ".join(text.rsplit(": ", 1)[-1].split())


def bounded_client(k8s: Any, conf: Any, unreachable: Callable[[str, str], Exception]) -> Any:
    """An ``ApiClient`` on ``conf`` whose calls have time limits; a server it cannot reach
    raises ``unreachable(server, why)``."""
    import urllib3

    conf.retries = CONNECT_RETRIES

    class BoundedApiClient(k8s.client.ApiClient):  # type: ignore[misc]
        def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            if not args and kwargs.get("_request_timeout") is None:
                streamed = kwargs.get("_preload_content") is False
                kwargs["_request_timeout"] = (
                    CONNECT_TIMEOUT_S,
                    None if streamed else READ_TIMEOUT_S,
                )
            try:
                return super().request(method, url, *args, **kwargs)
            except urllib3.exceptions.HTTPError as e:
                raise unreachable(str(self.configuration.host), _why(e)) from None

    return BoundedApiClient(conf)
