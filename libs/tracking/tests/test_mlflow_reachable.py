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
