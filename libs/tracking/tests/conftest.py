"""Backends the tracker tests run on: local disk, fsspec memory, and S3 (moto server).

The S3 server is a real HTTP server (moto's server mode) in its own process on
127.0.0.1, started once per session. Child processes reach it through fsspec's
``FSSPEC_S3_*`` environment variables, exactly as a deployed app would be configured.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from torchx_test_fixtures_ports import free_loopback_port
from torchx_test_fixtures_processes import stop

from torchx.runtime.tracking import FsspecResultTracker

BACKENDS = ["local", "memory", "s3"]
_S3_CREDENTIALS = {"key": "testing", "secret": "testing"}
# moto imports much of Flask and botocore: seconds on an idle machine, far more under load
_SERVER_START_TIMEOUT_S = 120.0


@dataclass
class S3Server:
    endpoint_url: str

    @property
    def storage_options(self) -> dict[str, Any]:
        return {
            "endpoint_url": self.endpoint_url,
            **_S3_CREDENTIALS,
        }

    @property
    def env(self) -> dict[str, str]:
        """Environment that points fsspec (and botocore) in a child process at the server."""
        return {
            "FSSPEC_S3_ENDPOINT_URL": self.endpoint_url,
            "FSSPEC_S3_KEY": _S3_CREDENTIALS["key"],
            "FSSPEC_S3_SECRET": _S3_CREDENTIALS["secret"],
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def new_bucket(self) -> str:
        import s3fs  # type: ignore[import-untyped]

        fs = s3fs.S3FileSystem(**self.storage_options)
        bucket = f"tracking-{uuid.uuid4().hex[:12]}"
        fs.mkdir(bucket)
        return bucket


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + _SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    pytest.importorskip("s3fs", reason="s3fs is needed for the S3 tests (root dev group)")
    pytest.importorskip("moto.server", reason="moto[server] is needed for the S3 tests")
    log = tmp_path_factory.mktemp("moto") / "server.log"
    for _attempt in range(3):  # the free port may be taken before the server binds it
        port = free_loopback_port()
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        if _wait_for_port(port, process):
            break
        process.kill()
        process.wait()
    else:
        pytest.skip(f"moto's S3 server did not start on 127.0.0.1; its log: {log.read_text()}")
    try:
        yield S3Server(endpoint_url=f"http://127.0.0.1:{port}")
    finally:
        stop(process, grace=10)


@dataclass
class Backend:
    """A fresh, empty tracker base on one backend."""

    name: str
    base: str
    storage_options: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def tracker(self) -> FsspecResultTracker:
        return FsspecResultTracker(self.base, **self.storage_options)

    def child_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}


def _make_backend(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    if name == "local":
        return Backend(name, str(tmp_path / "tracker"))
    if name == "memory":
        base = f"memory://tracker-{uuid.uuid4().hex}"
        backend = Backend(name, base)
        request.addfinalizer(lambda: _remove_memory(backend))
        return backend
    server: S3Server = request.getfixturevalue("s3_server")
    bucket = server.new_bucket()
    return Backend(name, f"s3://{bucket}/runs/123", server.storage_options, server.env)


def _remove_memory(backend: Backend) -> None:
    fs = backend.tracker().fs
    if fs.exists(backend.base):
        fs.rm(backend.base, recursive=True)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each backend in turn."""
    return _make_backend(request.param, tmp_path, request)


@pytest.fixture(params=["local", "s3"])
def shared_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Backends that several processes can share (memory lives inside one process)."""
    return _make_backend(request.param, tmp_path, request)


@pytest.fixture
def make_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], Backend]:
    """A fresh backend by name, for tests that are not run on every backend."""
    return lambda name: _make_backend(name, tmp_path, request)


@pytest.fixture(scope="session")
def backend_maker() -> Callable[[str, Path, pytest.FixtureRequest], Backend]:
    """The backend factory itself, for fixtures wider than one test."""
    return _make_backend


StartTogether = Callable[[list[list[str]], dict[str, str], Path], list["subprocess.Popen[str]"]]


@pytest.fixture(scope="session")
def start_together() -> StartTogether:
    """Starts one process per command line, each of which prints ``ready`` and then waits
    for the ``go`` file; creates ``go`` once all are ready, so they write at the same time."""

    def start(
        commands: list[list[str]], env: dict[str, str], go: Path
    ) -> list[subprocess.Popen[str]]:
        processes = [
            subprocess.Popen(
                command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for command in commands
        ]
        for process in processes:
            assert process.stdout is not None
            assert process.stdout.readline() == "ready\n", process.communicate()[1]
        go.touch()
        return processes

    return start
