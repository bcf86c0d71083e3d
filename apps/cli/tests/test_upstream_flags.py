"""Every flag of pytorch/torchx 0.7's commands is accepted, with the same meaning."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from torchx.cli._app import app

cli = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_log_level_is_a_global_option() -> None:
    code, _, err = invoke("--log_level", "INFO", "run", "--dryrun", "utils.echo")
    assert code == 0, err
    code, _, err = invoke("--log_level", "LOUD", "builtins")
    assert code == 2 and err.startswith("torchx: error: --log_level: got 'LOUD'")


def test_run_flags(isolated: Path) -> None:
    workspace = isolated / "ws"
    workspace.mkdir()
    code, out, err = invoke(
        "run", "-s", "local_cwd", "--scheduler_args", "log_dir=" + str(isolated / "logs"),
        "--buck-target", str(workspace), "--dryrun", "utils.echo", "--msg", "x",
    )  # fmt: skip
    assert code == 0, err
    # the app runs in a copy of the workspace (less what .torchxignore lists), made on submit
    assert str(isolated / "logs") in out and f"workspace: {workspace}, copied into " in out
    # --wait and --log, as flags without a value
    code, out, err = invoke("run", "--wait", "--log", "utils.echo", "--msg", "waited")
    assert code == 0, err
    assert out.strip().startswith("local_cwd://") and "echo/0 waited" in err


def test_dash_h_and_name_in_dist_ddp_args() -> None:
    code, out, err = invoke(
        # slurm's dryrun: the request is made without looking for torchrun on this PATH
        "run", "--dryrun", "--json", "-s", "slurm", "dist.ddp", "-h", "gpu.small", "-j", "2",
        "--name", "exp/run", "--tee", "2", "--script", "t.py",
    )  # fmt: skip
    assert code == 0, err
    dry = json.loads(out)
    (role,) = dry["app"]["roles"]
    assert dry["app"]["name"] == "run" and role["name"] == "t"
    assert role["resource"]["gpu"] == 1 and role["resource"]["memMB"] == 32 * 1024
    assert role["env"]["TORCHX_TRACKING_EXPERIMENT_NAME"] == "exp"
    assert role["args"][role["args"].index("--tee") + 1] == "2"
    code, out, _ = invoke("run", "dist.ddp", "--help")
    assert code == 0 and "usage: dist.ddp" in out


def test_status_roles_log_tail_and_cancel(isolated: Path) -> None:
    code, out, err = invoke("run", "utils.echo", "--msg", "one")
    assert code == 0, err
    handle = out.strip()
    code, out, _ = invoke("status", "--roles", "echo", handle)
    assert code == 0 and "*echo[0]:SUCCEEDED" in out
    code, out, _ = invoke("status", "--roles", "other", handle)
    assert code == 0 and "echo[0]" not in out and "State: SUCCEEDED" in out
    code, out, _ = invoke("status", "--json", "--roles", "other", handle)
    assert json.loads(out)["roles"] == []
    code, out, _ = invoke("log", "-t", handle)
    assert code == 0 and out == "echo/0 one\n"
    code, _, err = invoke("cancel", "local_cwd://torchx/never-ran")
    assert code == 2 and "no such app" in err


def test_configure_schedulers_print_and_all(isolated: Path) -> None:
    code, out, _ = invoke("configure", "-s", "local_cwd,slurm", "--print")
    assert code == 0 and "[local_cwd]" in out and "[slurm]" in out
    assert "[kubernetes]" not in out and not (isolated / ".torchxconfig").exists()
    code, out, _ = invoke("configure", "--schedulers", "local_cwd", "-a", "--print")
    assert code == 0 and "log_dir" in out
    code, out, _ = invoke("configure", "-s", "local_cwd")
    assert code == 0 and (isolated / ".torchxconfig").is_file()
    code, _, err = invoke("configure", "-s", "local_cwdd", "--print")
    assert code == 2 and "did you mean 'local_cwd'" in err


def test_version_module() -> None:
    from importlib.metadata import version

    from torchx.version import __version__

    assert __version__ == version("torchx")
    _, out, _ = invoke("--version")
    assert out.strip() == f"torchx-{__version__}"  # as 0.7 prints it
