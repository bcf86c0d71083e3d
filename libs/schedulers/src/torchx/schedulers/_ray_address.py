"""Ray cluster addresses, read the way Ray's own ``ray job`` CLI reads them, in seconds.

Ray takes four forms; each ends as the dashboard's HTTP URL, which job submission talks to:

- ``http://HOST:PORT`` or ``https://HOST:PORT``: the dashboard itself;
- ``HOST:PORT``: the dashboard when one answers there (what ``runopts ray`` documents,
  e.g. ``127.0.0.1:8265``), else a GCS address (``10.0.0.5:6379``) that knows it (Ray
  itself reads a loopback GCS address as this machine's external one);
- ``ray://HOST:PORT``: a Ray Client server, which knows its dashboard;
- ``auto``: the cluster started on this machine.

Every lookup that talks to the cluster is bounded (``LOOKUP_TIMEOUT_S``): Ray's own GCS
look-up retries for tens of seconds, which a person at a prompt takes for a hang.
"""

from __future__ import annotations

import os
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from torchx.schedulers._errors import SchedulerError, require
from torchx.specs import SpecsError

BACKEND = "ray"
# How long a dashboard has to answer a probe, and a cluster a look-up.
PROBE_TIMEOUT_S = 2.0
LOOKUP_TIMEOUT_S = 5.0
# Ray reads these itself, and lets them replace an address it is given.
_RAY_ENVS = ("RAY_API_SERVER_ADDRESS", "RAY_ADDRESS")
_HOST_PORT = re.compile(r"^[A-Za-z0-9.\-\[\]:]+:\d+$")
_FORMS = "http://HOST:PORT, HOST:PORT, ray://HOST:PORT or auto (e.g. 127.0.0.1:8265)"
T = TypeVar("T")
_env_lock = threading.Lock()


def check_address(value: str) -> str:
    """``value`` if it is in one of Ray's forms (no network), without a trailing slash."""
    text = value.strip().rstrip("/")
    scheme, _, rest = text.rpartition("://")
    if text == "auto" or (scheme in ("", "http", "https", "ray") and _HOST_PORT.match(rest)):
        return text
    raise SpecsError("run option 'address'", value, f"give the Ray cluster's address: {_FORMS}")


def is_dashboard_form(address: str) -> bool:
    """Whether ``address`` names a dashboard without asking anyone (``http(s)://``)."""
    return address.startswith(("http://", "https://"))


def request_address(address: str) -> str:
    """The address a dry run puts in its request, without asking HOST:PORT or a URL
    anything (a dry run needs no cluster): ray:// and auto name no dashboard themselves, so
    they are looked up (bounded), and kept as given when no cluster answers (``schedule``
    then refuses)."""
    address = check_address(address)
    if address != "auto" and not address.startswith("ray://"):
        return address
    try:
        return dashboard_url(address)
    except SchedulerError:
        return address


def needs_lookup_at_dry_run(address: str) -> bool:
    """Whether ``address`` is a form whose dashboard had to be found by the dry run."""
    return address == "auto" or address.startswith("ray://")


def dashboard_url(address: str, timeout: float = LOOKUP_TIMEOUT_S) -> str:
    """The dashboard URL of the cluster at ``address`` (any of Ray's forms), found within
    about ``timeout`` seconds; a SchedulerError naming the address otherwise."""
    address = check_address(address)
    if is_dashboard_form(address):
        return address
    if address.startswith("ray://"):
        utils: Any = require("ray.dashboard.utils", scheduler=BACKEND, extra="ray")
        return _bounded(
            lambda: str(utils.ray_client_address_to_api_server_url(address)),
            timeout,
            f"no Ray Client server answered at {address}",
        )
    if address != "auto":
        answer = _probe(f"http://{address}")
        if answer == "dashboard":
            return f"http://{address}"
        if answer == "nothing":
            # Nothing listens: Ray's GCS look-up would only retry (and log) in vain.
            raise SchedulerError(
                BACKEND,
                f"nothing answers at {address} (connection refused)",
                "start the cluster, or give its address with -cfg address=... or "
                f"$RAY_ADDRESS: {_FORMS}",
            )
    utils = require("ray.dashboard.utils", scheduler=BACKEND, extra="ray")
    what = (
        "no Ray cluster runs on this machine"
        if address == "auto"
        else f"neither a Ray dashboard nor a GCS answered at {address}"
    )
    return _bounded(lambda: str(utils.ray_address_to_api_server_url(address)), timeout, what)


def _probe(url: str) -> str:
    """``dashboard`` if a Ray dashboard answers at ``url``, ``nothing`` if the connection is
    refused, ``other`` for anything else (a GCS port, a slow host)."""
    try:
        with urllib.request.urlopen(f"{url}/api/version", timeout=PROBE_TIMEOUT_S) as resp:
            return "dashboard" if resp.status == 200 else "other"
    except urllib.error.URLError as e:
        return "nothing" if isinstance(e.reason, ConnectionRefusedError) else "other"
    except ConnectionRefusedError:
        return "nothing"
    except (OSError, ValueError):
        return "other"


def _bounded(fn: Callable[[], T], timeout: float, what: str) -> T:
    """``fn()`` in a thread given ``timeout`` seconds; Ray's calls here have no time-out."""
    result: list[T] = []
    error: list[BaseException] = []

    def call() -> None:
        try:
            result.append(fn())
        except BaseException as e:  # handed to the caller
            error.append(e)

    # A daemon: a look-up that never returns must not keep the process alive.
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(timeout)
    if result:
        return result[0]
    reason = f"({type(error[0]).__name__}: {error[0]})" if error else f"within {timeout:g}s"
    raise SchedulerError(
        BACKEND,
        f"{what} {reason}",
        f"start the cluster, or give its address with -cfg address=... or $RAY_ADDRESS: {_FORMS}",
    )


@contextmanager
def _only(url: str) -> Iterator[None]:
    """Make Ray use ``url`` as given: its client otherwise replaces the address it is given
    with $RAY_ADDRESS, and reads a HOST:PORT there as a GCS address (a 40 s retry loop
    against a dashboard's port). Ray looks at the environment only while the client is
    made, so the environment is set for that moment, under a lock."""
    with _env_lock:
        saved = {k: os.environ.get(k) for k in _RAY_ENVS}
        os.environ["RAY_API_SERVER_ADDRESS"] = url
        os.environ.pop("RAY_ADDRESS", None)
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def job_client(url: str, timeout: float = LOOKUP_TIMEOUT_S) -> Any:
    """Ray's JobSubmissionClient for the dashboard at ``url``, made within ``timeout``."""
    job_submission: Any = require("ray.job_submission", scheduler=BACKEND, extra="ray")

    def make() -> Any:
        with _only(url):
            return job_submission.JobSubmissionClient(url)

    return _bounded(make, timeout, f"the Ray dashboard at {url} did not answer")
