"""kubernetes: an API server that is down or never answers is one line, in bounded time.

No cluster is needed: a kubeconfig names a loopback port where nothing listens, or where a
socket accepts connections and never answers (as a firewall or a hung server would).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from torchx_test_fixtures_ports import free_loopback_port

from torchx.schedulers import _kubernetes_client
from torchx.schedulers.kubernetes_scheduler import KubernetesApiError, KubernetesScheduler

pytest.importorskip("kubernetes")
yaml = pytest.importorskip("yaml")


def _kubeconfig(path: Path, port: int) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": f"https://127.0.0.1:{port}",
                            "insecure-skip-tls-verify": True,
                        },
                    }
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


@pytest.fixture
def mute_port() -> Iterator[int]:
    """A loopback port whose connections are accepted by the kernel and never answered."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield int(s.getsockname()[1])


def _describe_error(kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> BaseException:
    """What describe raised, from a thread given a generous deadline (a hang fails)."""
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    raised: list[BaseException] = []

    def describe() -> None:
        try:
            KubernetesScheduler("torchx").describe("ns:app")
        except BaseException as e:  # the test inspects it
            raised.append(e)

    t = threading.Thread(target=describe, daemon=True)
    t.start()
    t.join(timeout=90)
    assert not t.is_alive(), "describe still waits for a server that never answers"
    assert raised, "describe returned without reaching any server"
    return raised[0]


def test_server_down_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_loopback_port()
    config = _kubeconfig(tmp_path / "kubeconfig", port)
    e = _describe_error(config, monkeypatch)
    assert isinstance(e, KubernetesApiError), repr(e)
    text = str(e)
    assert "\n" not in text
    assert f"cannot reach the API server https://127.0.0.1:{port}" in text
    assert "Connection refused" in text and str(config) in text
    assert e.status is None


def test_server_that_never_answers_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mute_port: int
) -> None:
    monkeypatch.setattr(_kubernetes_client, "CONNECT_TIMEOUT_S", 0.5)
    e = _describe_error(_kubeconfig(tmp_path / "kubeconfig", mute_port), monkeypatch)
    assert isinstance(e, KubernetesApiError), repr(e)
    assert f"cannot reach the API server https://127.0.0.1:{mute_port}" in str(e)
    assert "timed out" in str(e)


def test_a_kubeconfig_that_does_not_exist_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "no-such.kc"
    err = _describe_error(gone, monkeypatch)
    assert isinstance(err, KubernetesApiError)
    text = str(err)
    assert f"KUBECONFIG={gone}: no such file" in text and "\n" not in text, text
    assert "point KUBECONFIG at your kubeconfig file" in text
    # unset, the same failure says where a kubeconfig is looked for instead
    monkeypatch.delenv("KUBECONFIG")
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(KubernetesApiError, match="set KUBECONFIG to a kubeconfig file"):
        KubernetesScheduler("torchx").describe("ns:app")
