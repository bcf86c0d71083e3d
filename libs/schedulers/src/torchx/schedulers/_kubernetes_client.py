"""The kubernetes ``ApiClient`` torchx makes from a kubeconfig or a pod's service account.

The client library waits for ever on a server that accepts a connection and never answers,
and reports one it cannot reach as a urllib3 retry error naming no cluster. The client made
here bounds every call in time and turns "could not reach the server" into one line naming
the server, where its address came from and what to check.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

from torchx.schedulers._errors import SchedulerError

# Seconds to open a connection (TCP and TLS handshake) and to wait for each read of an
# answer. A log that is followed has no read limit: its lines may be minutes apart.
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 120.0
# One more try after a failed connection, not urllib3's three: a server that is down is
# reported in seconds. One more try of an idempotent request whose connection was dropped (a
# kept-alive connection closed by a restarting server or an idle cut as it is reused), but
# none after a read timed out: that server was reached and did not answer in time, and
# waiting for it twice only doubles the wait.
CONNECT_RETRIES = 1
# Seconds to wait for the answer to each delete that undoes a failed submission: a server
# that did not answer the create will likely not answer these either.
ROLLBACK_READ_TIMEOUT_S = 10.0
# Pages one list may take: a server or proxy that hands back the same continue token, or
# never an empty one, would otherwise be listed for ever.
MAX_PAGES = 10_000
# Items per answer of a list call: a cluster-wide list comes in pages of this many.
PAGE_SIZE = 500
# Methods sent once more when their connection was dropped before an answer.
_REPEATABLE = frozenset({"GET", "HEAD"})
# Methods whose request, sent and not answered, may still have changed the cluster.
_CHANGING = frozenset({"POST", "PATCH", "PUT"})


def kubeconfig_problem(error: BaseException, kubeconfig: str | None) -> tuple[str, str]:
    """Why no cluster could be found and what to do, where reading ``kubeconfig`` (the
    KUBECONFIG variable: one path, or several joined by os.pathsep) failed with ``error``.
    The client library skips a path that does not exist and says only that it found no
    configuration, as if KUBECONFIG were unset: a set one is named here."""
    if not kubeconfig:
        return (
            f"no cluster to talk to ({error})",
            "set KUBECONFIG to a kubeconfig file or run inside a pod",
        )
    paths = [p for p in kubeconfig.split(os.pathsep) if p]
    if not any(os.path.exists(os.path.expanduser(p)) for p in paths):
        return (
            f"KUBECONFIG={kubeconfig}: no such file",
            "point KUBECONFIG at your kubeconfig file, or unset it to use ~/.kube/config",
        )
    return (
        f"no cluster to talk to: KUBECONFIG={kubeconfig} ({error})",
        "fix that kubeconfig (`kubectl config view` reads it too), or point KUBECONFIG at another",
    )


def why_failed(error: Exception) -> str:
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


def _unanswered(error: Exception) -> str | None:
    """How a sent request went unanswered (timed out or dropped); None if it was not sent."""
    import urllib3.exceptions as u3

    reason: Any = getattr(error, "reason", None) or error
    if isinstance(reason, u3.ReadTimeoutError):
        return f"no answer in {READ_TIMEOUT_S:g} s"
    if isinstance(reason, u3.ProtocolError):
        return f"the connection closed before an answer ({why_failed(error)})"
    return None


def _dropped(error: Exception) -> bool:
    """Whether the connection closed before an answer (not a timeout): a kept-alive
    connection a restarting server or an idle cut closed just as it was reused."""
    import urllib3.exceptions as u3

    return isinstance(getattr(error, "reason", None) or error, u3.ProtocolError)


def bounded_client(
    k8s: Any,
    conf: Any,
    unreachable: Callable[[str, str], Exception],
    unanswered: Callable[[str, str, str], Exception],
) -> Any:
    """An ``ApiClient`` on ``conf`` whose calls have time limits; a server it cannot reach
    raises ``unreachable(server, why)``, and a POST/PATCH/PUT that was sent and got no answer
    (so may have taken effect) raises ``unanswered(server, method, why)``."""
    import urllib3

    conf.retries = urllib3.Retry(total=CONNECT_RETRIES, connect=CONNECT_RETRIES, read=0)

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
                if method.upper() in _REPEATABLE and _dropped(e):
                    return self._once_more(method, url, *args, **kwargs)
                self._raise(method, e)

        def _once_more(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().request(method, url, *args, **kwargs)
            except urllib3.exceptions.HTTPError as e:
                self._raise(method, e)

        def _raise(self, method: str, e: Exception) -> NoReturn:
            server = str(self.configuration.host)
            silence = _unanswered(e) if method.upper() in _CHANGING else None
            if silence is not None:
                raise unanswered(server, method.upper(), silence) from None
            raise unreachable(server, why_failed(e)) from None

    return BoundedApiClient(conf)


def create_all(
    manifests: Iterable[dict[str, Any]],
    create: Callable[[dict[str, Any]], object],
    delete: Callable[[dict[str, Any], float], object],
    in_doubt: Callable[[BaseException], bool],
    namespace: str,
) -> None:
    """Create each manifest in order; if one fails, delete those already made, newest first,
    and the one that failed too when ``in_doubt(error)`` says its request may have reached
    the server (sent and unanswered, or interrupted): a refused submission leaves nothing.

    Each delete waits ``ROLLBACK_READ_TIMEOUT_S`` for its answer; one that fails does not
    stop the older ones. The create's error is raised, naming the objects that may be left.
    """
    created: list[dict[str, Any]] = []
    for manifest in manifests:
        try:
            create(manifest)
        except BaseException as e:
            if in_doubt(e):
                created.append(manifest)  # deleting an object that is not there is a no-op
            left = []
            for made in reversed(created):
                try:
                    delete(made, ROLLBACK_READ_TIMEOUT_S)
                except Exception:
                    left.append(f"{made['kind'].lower()}/{made['metadata']['name']}")
            if left and len(e.args) == 1 and isinstance(e.args[0], str):
                e.args = (
                    f"{e.args[0]}; the undo failed, so these may be left: {' '.join(left)}"
                    f" (delete them with kubectl delete -n {namespace} {' '.join(left)})",
                )
            raise
        created.append(manifest)


def paged(list_call: Callable[..., Any], **kwargs: Any) -> Iterator[Any]:
    """The items of a kubernetes list call, fetched ``PAGE_SIZE`` at a time with the
    server's ``continue`` token, so no one answer holds a whole cluster's objects.

    A page is a client model (``V1PodList``) or, from a custom resource's list call, the
    plain dict of the server's JSON; its items are given as they come."""
    token: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = list_call(limit=PAGE_SIZE, _continue=token, **kwargs)
        if isinstance(page, dict):
            yield from page.get("items") or ()
            token = (page.get("metadata") or {}).get("continue")
        else:
            yield from page.items
            token = page.metadata._continue
        if not token:
            return
        if token in seen:
            raise SchedulerError(
                "kubernetes",
                f"the API server sent continue token {token[:40]!r} twice while listing; "
                "its list answers cannot be paged",
                "check the server or the proxy before it",
            )
        seen.add(token)
    raise SchedulerError(
        "kubernetes",
        f"a list took more than {MAX_PAGES} pages of {PAGE_SIZE} items and was stopped",
        "list one namespace, or fewer objects",
    )
