"""``torchx run`` takes the current directory as the workspace by default, as 0.7's did.

Dryruns only: what needs an engine or a cluster is in tests/integration/test_docker_cli.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from torchx.cli._app import app

SCRIPT = ["utils.python", "--script", "train.py"]


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def working_dir(out: str) -> object:
    """The runtime env's working_dir in a Ray dryrun's request (None: none)."""
    found = re.search(r'"working_dir": ("[^"]*"|null)', out)
    return None if found is None else json.loads(found.group(1))


@pytest.fixture
def project(isolated: Path) -> Path:
    (isolated / "train.py").write_text("print('marker')\n")
    return isolated


def test_kubernetes_without_image_repo_names_both_fixes_before_building(project: Path) -> None:
    code, out, err = invoke("run", "-s", "kubernetes", "--dryrun", *SCRIPT)
    assert code == 2 and out == ""
    notice, error = err.splitlines()
    assert notice == (
        f"torchx: building the current directory ({project}) into the image of role "
        'python; --workspace "" to skip'
    )
    assert error.startswith("torchx: error: run option 'image_repo': got None; ")
    assert "-cfg image_repo=REGISTRY/REPO" in error and '--workspace "")' in error
    # Turned off, the image is used as it is, with no notice.
    code, out, err = invoke("run", "-s", "kubernetes", "--dryrun", "--workspace", "", *SCRIPT)
    assert code == 0 and err == "", err
    assert "image: ghcr.io/pytorch/torchx:0.7.0" in out and "torchx-workspace" not in out


def test_ray_ships_the_current_directory_as_working_dir(project: Path) -> None:
    code, out, err = invoke("run", "-s", "ray", "--dryrun", *SCRIPT)
    assert code == 0, err
    assert working_dir(out) == str(project)
    assert err == (
        f"torchx: shipping the current directory ({project}) to the cluster as the job's "
        'working_dir; --workspace "" to skip\n'
    )
    code, out, err = invoke("run", "-s", "ray", "--dryrun", "--workspace", "", *SCRIPT)
    assert code == 0 and err == "", err
    assert working_dir(out) is None
    # A working_dir of the user's own wins over the default, silently.
    (project / "code").mkdir()
    cfg = f"working_dir={project / 'code'}"
    code, out, err = invoke("run", "-s", "ray", "--dryrun", "-cfg", cfg, *SCRIPT)
    assert code == 0 and err == "", err
    assert working_dir(out) == str(project / "code")


@pytest.mark.parametrize(
    ("config", "expected_dir"),
    [("workspace =\n", None), ("workspace = code\n", "code")],
)
def test_the_config_workspace_replaces_the_default(
    project: Path, config: str, expected_dir: str | None
) -> None:
    (project / "code").mkdir()
    (project / ".torchxconfig").write_text("[cli:run]\n" + config)
    code, out, err = invoke("run", "-s", "ray", "--dryrun", *SCRIPT)
    assert code == 0 and err == "", err
    expected = None if expected_dir is None else str(project / expected_dir)
    assert working_dir(out) == expected


def test_the_0_7_subcommand_passes_an_empty_workspace_on(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from torchx.cli.cmd_run import CmdRun

    cmd = CmdRun()
    parser = __import__("argparse").ArgumentParser()
    cmd.add_arguments(parser)
    args = parser.parse_args(["-s", "ray", "--dryrun", "--workspace", "", *SCRIPT])
    assert cmd.argv(args)[:6] == ["-s", "ray", "--dryrun", "--workspace", "", *SCRIPT[:1]]
    cmd.run(args)
    captured = capsys.readouterr()
    assert working_dir(captured.out) is None and "--workspace" not in captured.err


def test_schedulers_without_workspaces_say_nothing(project: Path) -> None:
    # local_dir runs in the directory the image names; Slurm takes one only with a job_dir
    for scheduler in ("local_cwd", "local_dir", "slurm"):
        code, out, err = invoke("run", "-s", scheduler, "--dryrun", *SCRIPT, "--image", ".")
        assert code == 0 and err == "", (scheduler, err)
        assert "python train.py" in out


SWEEP = ["--sweep", "script=train.py,eval.py", "utils.python"]


def test_a_sweep_takes_the_same_default_workspace_for_every_trial(project: Path) -> None:
    (project / "eval.py").write_text("print('eval')\n")
    code, out, err = invoke("run", "-s", "ray", "--dryrun", *SWEEP)
    assert code == 0, err
    assert err == (
        f"torchx: shipping the current directory ({project}) to the cluster as the job's "
        'working_dir; --workspace "" to skip\n'
    )
    assert f"workspace of every trial: {project}\n" in out
    assert working_dir(out) == str(project)
    # the working_dir every trial's dryrun passes on, by the sweep's own record
    code, out, err = invoke("run", "-s", "ray", "--dryrun", "--json", *SWEEP)
    assert code == 0, err
    assert json.loads(out)["workspace"] == str(project)
    code, out, err = invoke("run", "-s", "ray", "--dryrun", "--workspace", "", *SWEEP)
    assert code == 0 and err == "", err
    assert working_dir(out) is None and "workspace of every trial" not in out


def test_a_kubernetes_sweep_without_image_repo_fails_as_run_does(project: Path) -> None:
    (project / "eval.py").write_text("print('eval')\n")
    run = invoke("run", "-s", "kubernetes", "--dryrun", *SCRIPT)
    sweep = invoke("run", "-s", "kubernetes", "--dryrun", *SWEEP)
    assert sweep[0] == run[0] == 2 and sweep[1] == ""
    assert sweep[2] == run[2] and len(sweep[2].splitlines()) == 2, sweep[2]


def test_a_large_workspace_is_named_once_before_the_run(project: Path) -> None:
    with open(project / "weights.pt", "wb") as f:
        f.truncate(200 << 20)  # sparse: no disk used
    code, out, err = invoke("run", "-s", "ray", "--dryrun", *SCRIPT)
    assert code == 0, err
    notice, warning = err.splitlines()
    assert notice.startswith("torchx: shipping the current directory")
    assert warning.startswith(f"torchx: warning: the workspace {project} ships 200.0 MiB")
    assert "over 100.0 MiB; largest: weights.pt 200.0 MiB;" in warning
    assert warning.endswith('add them to .torchxignore, or --workspace "" to skip')
    # a workspace given explicitly is measured too; an ignored file is not counted
    (project / ".torchxignore").write_text("*.pt\n")
    code, out, err = invoke("run", "-s", "ray", "--dryrun", "--workspace", str(project), *SCRIPT)
    assert code == 0 and err == "", err
    assert working_dir(out) == str(project)
    code, _, err = invoke("run", "-s", "ray", "--dryrun", "--workspace", "", *SCRIPT)
    assert code == 0 and err == "", err
