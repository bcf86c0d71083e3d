"""The MLflow tracker's check that an http(s) tracking server accepts connections."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from torchx.tracker import TrackerConfigError

pytest.importorskip("mlflow", reason="install torchx-tracking[mlflow] for the MLflow tests")

from torchx.tracker import _reachable
from torchx.tracker.mlflow import create_tracker


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for scheme in ("http", "https", "all", "no"):
        monkeypatch.delenv(f"{scheme}_proxy", raising=False)
        monkeypatch.delenv(f"{scheme.upper()}_PROXY", raising=False)


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port bound but not listening: every connection to it is refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


def _outcome_of(target: object, *args: object) -> list[BaseException]:
    """Run ``target(*args)`` in a thread (a hang must fail the test, not stall it)."""
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            target(*args)  # type: ignore[operator]
        except BaseException as e:
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive(), "the check did not end"
    return outcome


def test_a_server_uri_where_nothing_listens_fails_in_one_line(
    refused_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_reachable, "SERVER_CONNECT_TIMEOUT_S", 0.5)
    uri = f"http://127.0.0.1:{refused_port}"
    (error,) = _outcome_of(create_tracker, uri)
    assert isinstance(error, TrackerConfigError)
    (line,) = str(error).splitlines()
    assert line.startswith(
        f"mlflow tracking_uri: got '{uri}'; no server accepted a connection at"
        f" 127.0.0.1:{refused_port} within 0.5 s ("
    )
    assert line.endswith("start the MLflow server or correct the URI")


def test_a_server_that_starts_listening_later_is_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A generous deadline: what is tested is the retry, not how fast the machine is.
    monkeypatch.setattr(_reachable, "SERVER_CONNECT_TIMEOUT_S", 120.0)
    refused_once = threading.Event()
    pause = _reachable._pause

    def observed_pause(seconds: float) -> None:
        refused_once.set()
        pause(seconds)

    monkeypatch.setattr(_reachable, "_pause", observed_pause)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        uri = f"http://127.0.0.1:{server.getsockname()[1]}"
        outcome: list[BaseException] = []

        def check() -> None:
            try:
                _reachable.check_server_reachable(uri)
            except BaseException as e:
                outcome.append(e)

        thread = threading.Thread(target=check, daemon=True)
        thread.start()
        # The server comes up only after the check was refused at least once.
        assert refused_once.wait(timeout=60), "the check never retried"
        server.listen()
        thread.join(timeout=120)
        assert not thread.is_alive(), "the check did not notice the server"
    assert outcome == []


@pytest.mark.parametrize("variable", ["ALL_PROXY", "all_proxy"])
def test_a_uri_reached_through_all_proxy_is_left_to_mlflow(
    variable: str, refused_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_reachable, "SERVER_CONNECT_TIMEOUT_S", 0.5)
    uri = f"http://127.0.0.1:{refused_port}"
    monkeypatch.setenv(variable, "http://127.0.0.1:9")
    assert _outcome_of(_reachable.check_server_reachable, uri) == []
    # ...unless NO_PROXY names the host: requests then connects directly, and so does the check
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    (error,) = _outcome_of(_reachable.check_server_reachable, uri)
    assert isinstance(error, TrackerConfigError)


def test_an_ipv6_host_is_written_in_brackets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_reachable, "SERVER_CONNECT_TIMEOUT_S", 0.5)
    try:
        held = socket.socket(socket.AF_INET6)
        held.bind(("::1", 0))
    except OSError as e:
        pytest.skip(f"no IPv6 loopback here: {e}")
    with held:
        port = held.getsockname()[1]
        (error,) = _outcome_of(_reachable.check_server_reachable, f"http://[::1]:{port}")
    assert f"no server accepted a connection at [::1]:{port} within" in str(error)


@pytest.mark.parametrize("port", ["abc", "99999", "0"])
def test_a_port_that_is_not_a_port_number_is_named(port: str) -> None:
    uri = f"http://127.0.0.1:{port}"
    with pytest.raises(TrackerConfigError) as info:
        create_tracker(uri)
    (line,) = str(info.value).splitlines()
    assert line == (
        f"mlflow tracking_uri: got '{uri}'; its port '{port}' is not valid;"
        " give a port number 1-65535"
    )


_SIBLING = "sibling-mlflow-0"


def _lookups_of_sibling(
    monkeypatch: pytest.MonkeyPatch, failures: list[socket.gaierror]
) -> list[str]:
    """Make ``_SIBLING`` a name for 127.0.0.1 once ``failures`` have been raised in turn
    (as a sibling role's container or pod name appears when it starts); each lookup is
    recorded in the list returned."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    def getaddrinfo(host: str, port: int, *args: object, **kwargs: object) -> object:
        if host != _SIBLING:
            return real(host, port, *args, **kwargs)  # type: ignore[arg-type]
        lookups.append(host)
        if len(lookups) <= len(failures):
            raise failures[len(lookups) - 1]
        return real("127.0.0.1", port, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return lookups


def test_a_host_name_that_appears_later_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_reachable, "SERVER_CONNECT_TIMEOUT_S", 120.0)
    lookups = _lookups_of_sibling(
        monkeypatch,
        [
            socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
            socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"),
        ],
    )
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        uri = f"http://{_SIBLING}:{server.getsockname()[1]}"
        assert _outcome_of(_reachable.check_server_reachable, uri) == []
    assert len(lookups) == 3


def test_a_host_name_that_never_appears_fails_in_one_line(
    refused_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_reachable, "SERVER_CONNECT_TIMEOUT_S", 0.5)
    unknown = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    _lookups_of_sibling(monkeypatch, [unknown] * 10_000)
    uri = f"http://{_SIBLING}:{refused_port}"
    (error,) = _outcome_of(_reachable.check_server_reachable, uri)
    assert str(error) == (
        f"mlflow tracking_uri: got '{uri}'; cannot look up the host of"
        f" {_SIBLING}:{refused_port} (Name or service not known); correct the host name"
    )


def test_a_lookup_that_cannot_succeed_later_fails_at_once(
    refused_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_reachable, "SERVER_CONNECT_TIMEOUT_S", 60.0)
    broken = socket.gaierror(socket.EAI_FAIL, "Non-recoverable failure in name resolution")
    lookups = _lookups_of_sibling(monkeypatch, [broken] * 10)
    uri = f"http://{_SIBLING}:{refused_port}"
    (error,) = _outcome_of(_reachable.check_server_reachable, uri)
    assert "(Non-recoverable failure in name resolution); correct the host name" in str(error)
    assert len(lookups) == 1


@pytest.fixture
def black_hole_then_live() -> Iterator[int]:
    """A port where 127.0.0.2 never answers (a listener whose backlog is full drops new
    connection requests) and 127.0.0.1 accepts."""
    with socket.socket() as live, socket.socket() as hole:
        live.bind(("127.0.0.1", 0))
        live.listen()
        port = live.getsockname()[1]
        try:
            hole.bind(("127.0.0.2", port))
        except OSError as e:
            pytest.skip(f"cannot listen on 127.0.0.2 here: {e}")
        hole.listen(0)
        fillers: list[socket.socket] = []
        try:
            for _ in range(16):
                filler = socket.socket()
                fillers.append(filler)
                filler.settimeout(1.0)
                try:
                    filler.connect(("127.0.0.2", port))
                except TimeoutError:
                    break  # the backlog is full: the hole now drops connection requests
            else:
                pytest.skip("127.0.0.2 kept accepting connections; no black hole here")
            yield port
        finally:
            for filler in fillers:
                filler.close()


def test_an_address_that_never_answers_leaves_time_for_the_next(
    black_hole_then_live: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Generous: the first address must not use up the deadline, however long it is.
    monkeypatch.setattr(_reachable, "SERVER_CONNECT_TIMEOUT_S", 60.0)
    # Shortens this test only; raising=False so that it also runs against a check
    # without the per-attempt limit.
    monkeypatch.setattr(_reachable, "_ATTEMPT_TIMEOUT_S", 0.5, raising=False)
    real = socket.getaddrinfo

    def two_addresses(host: str, port: int, *args: object, **kwargs: object) -> object:
        if host != "two.example":
            return real(host, port, *args, **kwargs)  # type: ignore[arg-type]
        tcp = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "")
        return [(*tcp, ("127.0.0.2", port)), (*tcp, ("127.0.0.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    uri = f"http://two.example:{black_hole_then_live}"
    assert _outcome_of(_reachable.check_server_reachable, uri) == []


_HUNG_LOOKUP = """
import socket, threading
from torchx.tracker import TrackerConfigError, _reachable

_reachable.SERVER_CONNECT_TIMEOUT_S = 0.5
never = threading.Event()
socket.getaddrinfo = lambda *args, **kwargs: never.wait()  # a resolver that never answers
try:
    _reachable.check_server_reachable("http://hung-resolver.invalid:5000")
except TrackerConfigError as e:
    print(e)
print([t.daemon for t in threading.enumerate() if t.name == "torchx-mlflow-lookup"])
"""


def test_a_lookup_that_never_answers_does_not_hold_the_interpreter_at_exit() -> None:
    """The lookup thread outlives the check when the resolver hangs; the app must still
    exit when its work is done, not wait on that thread."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _HUNG_LOOKUP],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,  # generous: it exits about half a second after it starts
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the interpreter waited on the hung lookup at exit")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "mlflow tracking_uri: got 'http://hung-resolver.invalid:5000'; cannot look up the host"
        " of hung-resolver.invalid:5000 (no answer within 0.5 s); correct the host name",
        "[True]",  # still blocked in the lookup, as a daemon thread
    ]
