"""A component's UI URL reaches ``torchx status`` (metrics.tensorboard, a real process)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
from torchx_test_fixtures_ports import free_loopback_port

from .cli_process import torchx


def test_tensorboard_url_is_in_the_status(isolated: Path) -> None:
    pytest.importorskip("tensorboard")
    port = free_loopback_port()
    proc = torchx(
        "run", "--no-wait", "metrics.tensorboard", "--logdir", str(isolated), "--port", str(port)
    )
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip()
    try:
        expected = f"http://{socket.gethostname()}:{port}/"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            data = json.loads(torchx("status", "--json", handle).stdout)
            if str(data["ui_url"]).startswith("http"):
                break
            time.sleep(0.2)
        assert data["ui_url"] == expected
        assert f"    UI URL: {expected}" in torchx("status", handle).stdout.splitlines()
    finally:
        torchx("cancel", handle)


def test_an_app_without_a_ui_keeps_the_schedulers_url() -> None:
    handle = torchx("run", "--no-log", "utils.echo").stdout.strip()
    url = json.loads(torchx("status", "--json", handle).stdout)["ui_url"]
    # local_cwd's own: the app's log directory, as in torchx 0.7
    assert url.startswith("file://") and url.endswith(handle.rsplit("/", 1)[1])
