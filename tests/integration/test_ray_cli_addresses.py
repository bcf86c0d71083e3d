"""The ``torchx`` command against a real Ray cluster (tests/fixtures/ray.py), with the
cluster's address in each form Ray's own CLI reads, and with nothing at the address."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TORCHX = str(Path(sys.executable).with_name("torchx"))


def torchx(
    *args: str, cwd: Path, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return subprocess.run(
        [TORCHX, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**clean, **env},
        check=False,
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_a_dry_run_needs_no_cluster(tmp_path: Path) -> None:
    proc = torchx("run", "--dryrun", "-s", "ray", "utils.echo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "=== SCHEDULER REQUEST ===" in proc.stdout


def test_nothing_at_the_address_is_one_line_in_seconds(tmp_path: Path) -> None:
    port = _closed_port()
    run = ["run", "-s", "ray", "--no-wait", "--workspace", "", "utils.echo"]
    for args in (["list", "-s", "ray"], run):
        # far below Ray's own GCS retry loop (about 40 s), ten times what it takes under load:
        # a hang fails here
        proc = torchx(*args, cwd=tmp_path, timeout=30, RAY_ADDRESS=f"127.0.0.1:{port}")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("torchx: error: ray: ") and proc.stderr.count("\n") == 1
        assert f"127.0.0.1:{port}" in proc.stderr


@pytest.mark.slow
def test_every_address_form_reaches_the_cluster(ray_cluster: Any, tmp_path: Path) -> None:
    dashboard = ray_cluster.address  # http://127.0.0.1:PORT
    host_port = dashboard.removeprefix("http://")
    # RAY_ADDRESS as HOST:PORT, the form that used to hang in Ray's GCS look-up
    proc = torchx(
        "run", "-s", "ray", "--no-wait", "--workspace", "", "utils.echo", "--msg", "hi",
        cwd=tmp_path,
        RAY_ADDRESS=host_port,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip()
    waited = torchx("wait", "--interval", "0.5", handle, cwd=tmp_path, RAY_ADDRESS=host_port)
    assert waited.returncode == 0 and waited.stdout == f"{handle} SUCCEEDED\n", waited.stderr
    status = torchx("status", handle, cwd=tmp_path, RAY_ADDRESS=host_port)
    assert "State: SUCCEEDED" in status.stdout
    submission_id = handle.rsplit("/", 1)[1].split("-", 1)[1]
    # (the GCS form is left out: Ray reads a loopback GCS address as the machine's external
    # one, where the fixture's cluster, pinned to 127.0.0.1, is not)
    for form in (dashboard, host_port):
        listed = torchx("list", "-s", "ray", "-cfg", f"address={form}", "--all", cwd=tmp_path)
        assert listed.returncode == 0, (form, listed.stderr)
        assert submission_id in listed.stdout, (form, listed.stdout)
    # list reads [ray] address from .torchxconfig, as run does
    (tmp_path / ".torchxconfig").write_text(f"[ray]\naddress = {host_port}\n")
    listed = torchx("list", "-s", "ray", "--all", cwd=tmp_path)
    assert listed.returncode == 0 and handle in listed.stdout, listed.stderr


def test_get_runner_gives_ray_client_to_the_ray_scheduler_only(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytorch/torchx 0.7: get_runner(ray_client=JobSubmissionClient(...)). Without the client
    # (and with no RAY_ADDRESS) the ray scheduler would not know the cluster to list.
    from ray.job_submission import JobSubmissionClient

    from torchx.runner import get_runner

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.chdir(tmp_path)
    client = JobSubmissionClient(ray_cluster.address)
    with get_runner(ray_client=client) as runner:
        address = runner.scheduler_run_opts("ray").get("address")
        assert address is not None and address.default == ray_cluster.address
        assert isinstance(runner.list("ray"), list)
        runner.scheduler_run_opts("local_cwd")  # a factory without ray_client is not given it
