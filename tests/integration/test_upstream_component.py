"""A component file written as pytorch/torchx's docs write one runs unchanged, through the
``torchx`` command and through the runner."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TORCHX = str(Path(sys.executable).with_name("torchx"))

# The shape of the component in pytorch/torchx's quickstart and component docs: imports
# through ``torchx.specs`` and its old module paths, a typed signature, a Google-style
# docstring, a named resource under its upstream key and ``specs.macros``.
COMPONENT = textwrap.dedent(
    '''
    from typing import Dict, Optional

    import torchx
    from torchx import specs
    from torchx.specs.api import AppDef, Role


    def greet(
        name: str,
        out_dir: str,
        num_replicas: int = 1,
        env: Optional[Dict[str, str]] = None,
        image: str = "ghcr.io/pytorch/torchx:0.7.0",
    ) -> AppDef:
        """
        Writes a greeting per replica (calls sh).

        Args:
            name: name to greet
            out_dir: where each replica writes its greeting
            num_replicas: how many replicas greet
            env: extra environment variables
            image: image to use
        """
        return specs.AppDef(
            name="greeter",
            roles=[
                Role(
                    name="greeter",
                    image=image,
                    entrypoint="sh",
                    args=[
                        "-c",
                        f'echo "Hello $GREETING {name}" > {out_dir}/{specs.macros.replica_id}.txt',
                    ],
                    env={"GREETING": "dear", **(env or {})},
                    num_replicas=num_replicas,
                    resource=specs.resource(h="aws_t3.medium"),
                )
            ],
        )
    '''
)


@pytest.fixture
def component(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("TORCHXCONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "my_component.py"
    path.write_text(COMPONENT)
    return path


def test_through_the_cli_the_handle_is_captured_from_stdout(component: Path) -> None:
    out = component.parent / "cli"
    out.mkdir()
    # H=$(torchx run ...): the handle alone on stdout, a waiting run's logs on stderr
    proc = subprocess.run(
        f"H=$({TORCHX} run -s local_cwd ./my_component.py:greet --name Turing --out_dir {out} "
        '--num_replicas 2) && echo "captured $H"',
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    handle = line.removeprefix("captured ")
    assert handle.startswith("local_cwd://") and " " not in handle
    assert f"{handle} SUCCEEDED" in proc.stderr
    assert sorted(p.read_text() for p in out.iterdir()) == ["Hello dear Turing\n"] * 2
    status = subprocess.run(
        [TORCHX, "status", handle], capture_output=True, text=True, check=True
    ).stdout
    assert "State: SUCCEEDED" in status and "*greeter[0]:SUCCEEDED" in status


def test_through_the_runner_with_upstream_calls(component: Path) -> None:
    from torchx.runner.api import get_runner
    from torchx.specs import AppState
    from torchx.specs.finder import get_component

    out = component.parent / "runner"
    out.mkdir()
    with get_runner() as runner:
        handle = runner.run_component(
            "./my_component.py:greet",
            ["--name", "Hopper", "--out_dir", str(out), "--env", "GREETING=hi"],
            "local_cwd",
        )
        status = runner.wait(handle, wait_interval=0.1)
        assert status is not None and status.state == AppState.SUCCEEDED, status
        assert runner.describe(handle) is not None
    assert (out / "0.txt").read_text() == "Hello hi Hopper\n"
    record = get_component("./my_component.py:greet")
    assert record.validation_errors == []
    assert record.description.startswith("Writes a greeting per replica")
    app = record.fn(name="x", out_dir="/tmp")
    assert app.roles[0].resource.capabilities["node.kubernetes.io/instance-type"] == "t3.medium"
