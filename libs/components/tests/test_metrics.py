from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from torchx.components import _supervise, get_component, metrics
from torchx.specs import SpecsError


def test_tensorboard_role_supervises_tensorboard() -> None:
    app = get_component("metrics.tensorboard").call(
        ["--logdir", "/logs", "--timeout", "60", "--exit_on_file", "/logs/DONE", "--port", "7007"]
    )
    (role,) = app.roles
    assert role.entrypoint == "python"
    sep = role.args.index("--")
    assert role.args[:sep] == [
        "-m", "torchx.components._supervise", "--timeout", "60.0",
        "--announce", "TensorBoard: http://{host}:7007/", "--exit_on_file", "/logs/DONE",
    ]  # fmt: skip
    assert role.args[sep + 1 :] == [
        "tensorboard",
        "--bind_all",
        "--port",
        "7007",
        "--logdir",
        "/logs",
    ]
    assert role.port_map == {"http": 7007}


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"timeout": 0}, "--timeout"), ({"port": 0}, "--port")]
)
def test_tensorboard_bad_input(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(SpecsError, match=field):
        metrics.tensorboard("/logs", **kwargs)  # type: ignore[arg-type]


def test_supervisor_stops_a_long_command_when_the_exit_file_appears(tmp_path: Path) -> None:
    done = tmp_path / "DONE"
    proc = subprocess.Popen(
        [sys.executable, "-m", "torchx.components._supervise", "--timeout", "120",
         "--exit_on_file", str(done), "--", "sleep", "300"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(0.3)
    assert proc.poll() is None  # still running: the file is not there yet
    done.touch()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "appeared, stopping" in err


def test_supervisor_announces_on_stdout_when_the_command_starts() -> None:
    import socket

    done = subprocess.run(
        [sys.executable, "-m", "torchx.components._supervise", "--timeout", "30",
         "--announce", "TensorBoard: http://{host}:7007/", "--", "true"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout == f"TensorBoard: http://{socket.gethostname()}:7007/\n"


def test_supervisor_timeout_start_file_and_exit_code(tmp_path: Path) -> None:
    assert _supervise.supervise(["sleep", "30"], timeout=0.2, poll_s=0.05) == 0
    assert _supervise.supervise(["sh", "-c", "exit 3"], timeout=30, poll_s=0.05) == 3
    never = str(tmp_path / "never")
    assert _supervise.supervise(["false"], timeout=0.2, start_on_file=never, poll_s=0.05) == 0
    assert _supervise.main(["--", "no-such-program-xyz"]) == 127
