"""``torchx status/wait/log`` of an app named ``sweep``: its id has a sweep's shape
(``sweep-`` and random letters), yet it is an app, not a sweep (real local_cwd apps)."""

from __future__ import annotations

import json
from pathlib import Path

from .cli_process import torchx


def test_status_wait_and_log_of_an_app_named_sweep(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    code = (
        f"import os, time\nprint('hello', flush=True)\n"
        f"while not os.path.exists({str(gate)!r}):\n    time.sleep(0.05)"
    )
    run = torchx("run", "--no-wait", "utils.python", "--name", "sweep", "--c", code)
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip()
    assert handle.startswith("local_cwd://torchx/sweep-")
    try:
        status = torchx("status", "--json", handle)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["state"] in ("PENDING", "RUNNING")
        waited = torchx("wait", "--timeout", "1s", handle)
        assert (waited.returncode, waited.stdout) == (
            124,
            f"{handle} RUNNING: still running after 1s (--timeout)\n",
        ), waited.stderr
    finally:
        gate.touch()
    waited = torchx("wait", handle)
    assert (waited.returncode, waited.stdout) == (0, f"{handle} SUCCEEDED\n"), waited.stderr
    # HANDLE/ROLE/REPLICA of this app is a log target, not a sweep's trial
    log = torchx("log", f"{handle}/python/0")  # utils.python's role is python, as in 0.7
    assert log.returncode == 0, log.stderr
    assert log.stdout.splitlines() == ["python/0 hello"]


def test_an_unknown_handle_of_a_sweeps_shape_names_both_things_it_could_be() -> None:
    unknown = "local_cwd://torchx/sweep-abcdefgh2345"
    proc = torchx("status", unknown)
    assert proc.returncode != 0
    assert proc.stderr.strip().endswith(
        f"app handle: got {unknown!r}; no such sweep here, nor app on its scheduler; "
        "`torchx list -s local_cwd` lists its apps"
    ), proc.stderr
