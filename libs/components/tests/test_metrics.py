from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from torchx.components import get_component, metrics
from torchx.specs import SpecsError


def test_tensorboard_role_runs_the_process_monitor_with_0_7s_arguments() -> None:
    """The default image is pytorch/torchx 0.7's, so the role runs a program it has."""
    app = get_component("metrics.tensorboard").call(
        ["--logdir", "/logs", "--timeout", "60", "--exit_on_file", "/logs/DONE", "--port", "7007"]
    )
    (role,) = app.roles
    assert role.entrypoint == "python"
    assert role.args == [
        "-m", "torchx.apps.utils.process_monitor", "--timeout", "60.0",
        "--start_on_file", "", "--exit_on_file", "/logs/DONE",
        "--", "tensorboard", "--bind_all", "--port", "7007", "--logdir", "/logs",
    ]  # fmt: skip
    assert role.port_map == {"http": 7007}
    assert app.metadata == {"ui_url": "http://{host}:7007/"}


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"timeout": 0}, "--timeout"), ({"port": 0}, "--port")]
)
def test_tensorboard_bad_input(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(SpecsError, match=field):
        metrics.tensorboard("/logs", **kwargs)  # type: ignore[arg-type]


def test_tensorboard_role_stops_its_command_when_the_exit_file_appears(tmp_path: Path) -> None:
    """The role's own arguments, TensorBoard swapped for a command that writes the exit
    file and then would run for minutes."""
    done = tmp_path / "DONE"
    (role,) = metrics.tensorboard("/logs", timeout=120, exit_on_file=str(done)).roles
    sep = role.args.index("--")
    args = [*role.args[:sep], "--poll_rate", "0.1", "--"]
    args += ["sh", "-c", f"touch {done}; exec sleep 300"]
    proc = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert f"{done} exists, stopping" in proc.stdout
