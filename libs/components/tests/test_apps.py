"""The ``python -m torchx.apps...`` programs pytorch/torchx 0.7's components run, run the
same way here, with 0.7's arguments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _run(module: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def test_copy_main(tmp_path: Path) -> None:
    src = tmp_path / "src.txt"
    src.write_text("data")
    dst = tmp_path / "out" / "dst.txt"
    out = _run("torchx.apps.utils.copy_main", "--src", str(src), "--dst", str(dst))
    assert out.returncode == 0, out.stderr
    assert dst.read_text() == "data"
    out = _run("torchx.apps.utils.copy_main", "--src", str(tmp_path / "none"), "--dst", str(dst))
    assert out.returncode == 1 and "does not exist" in out.stderr
    from torchx.apps.utils.copy_main import parse_args

    assert parse_args(["--src", "a", "--dst", "b"]).bufsize == 64 * 1024


def test_booth_main_records_its_result(tmp_path: Path) -> None:
    from torchx.runtime.tracking import FsspecResultTracker

    base = str(tmp_path / "booth")
    out = _run(
        "torchx.apps.utils.booth_main",
        "--x1", "1", "--x2", "3", "--trial_idx", "7", "--tracker_base", base,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert FsspecResultTracker(base)[7]["booth_eval"] == 0.0


def test_process_monitor(tmp_path: Path) -> None:
    from torchx.apps.utils.process_monitor import TIMEOUT_EXIT_CODE

    pm = "torchx.apps.utils.process_monitor"
    assert _run(pm, "--poll_rate", "0.1", "sh", "-c", "exit 3").returncode == 3
    # A timeout stops the program (SIGTERM: -15 is its exit status).
    out = _run(pm, "--timeout", "0.5", "--poll_rate", "0.1", "sleep", "30")
    assert out.returncode != 0 and "timeout" in out.stdout
    # Stopped when the exit file appears.
    stop = tmp_path / "stop"
    script = f"touch {stop}; exec sleep 30"
    out = _run(pm, "--exit_on_file", str(stop), "--poll_rate", "0.1", "sh", "-c", script)
    assert "exists, stopping" in out.stdout
    # Never started: the start file does not appear before the timeout.
    never = tmp_path / "never"
    out = _run(pm, "--start_on_file", str(never), "--timeout", "0.3", "--poll_rate", "0.1", "true")
    assert out.returncode == TIMEOUT_EXIT_CODE


def test_serve_registers_a_model_it_serves_itself(
    management_api: str, registrations: list[tuple[dict[str, list[str]], bytes]], tmp_path: Path
) -> None:
    api = management_api
    model = tmp_path / "m.mar"
    model.write_bytes(b"model bytes")
    out = _run(
        "torchx.apps.serve.serve",
        "--model_path", str(model), "--management_api", api, "--port", "0",
        "--model_name", "m", "--initial_workers", "1",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    ((query, model),) = registrations
    assert model == b"model bytes"
    assert (query["model_name"], query["initial_workers"]) == (["m"], ["1"])
    assert "registered" in out.stdout
    dry = _run(
        "torchx.apps.serve.serve", "--model_path", "http://m/x.mar", "--management_api", api,
        "--dryrun", "--initial_workers", "2",
    ).stdout  # fmt: skip
    assert dry == (
        f"POST {api}/models?url=http%3A%2F%2Fm%2Fx.mar&initial_workers=2\n"
        "App serve started successfully\n"
    )
    from torchx.apps.serve.serve import TORCHSERVE_PARAMS, get_routable_ip_to, rand_id

    assert "handler" in TORCHSERVE_PARAMS and get_routable_ip_to(api) == "127.0.0.1"
    assert rand_id() != rand_id()
    assert os.sep not in rand_id()
