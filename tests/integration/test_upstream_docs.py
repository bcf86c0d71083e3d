"""pytorch/torchx 0.7.0's documentation, run as written: the quickstart, the CLI page, the
``.torchxconfig`` page, custom components, advanced usage and the runner API.

Each test names the page it follows. Commands go through the ``torchx`` command in-process
(typer's runner) on local_cwd, with real processes; what needs a container engine or a
cluster is checked with ``--dryrun``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from torchx.cli._app import app

cli = CliRunner()


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder as the working directory, and a home and state of the test's own."""
    dirs = {name: tmp_path / name for name in ("home", "work", "state")}
    for path in dirs.values():
        path.mkdir()
    monkeypatch.setenv("HOME", str(dirs["home"]))
    monkeypatch.setenv("XDG_STATE_HOME", str(dirs["state"]))
    monkeypatch.delenv("TORCHXCONFIG", raising=False)
    monkeypatch.chdir(dirs["work"])
    return dirs["work"]


def torchx(*args: str) -> tuple[int, str, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def app_lines(err: str) -> list[str]:
    """The app's log lines of a waiting run (``role/N text`` on stderr)."""
    return [ln.split(" ", 1)[1] for ln in err.splitlines() if re.match(r"^\w+/\d+ ", ln)]


# -- quickstart.md ---------------------------------------------------------------------

QUICKSTART_APP = """\
import sys

print(f"Hello, {sys.argv[1]}!")
"""


def test_quickstart(project: Path) -> None:
    assert torchx("--help")[0] == 0
    (project / "my_app.py").write_text(QUICKSTART_APP)
    code, out, _ = torchx("run", "--scheduler", "local_cwd", "utils.python", "--help")
    assert code == 0 and "--script" in out
    code, _, err = torchx(
        "run", "--scheduler", "local_cwd", "utils.python", "--script", "my_app.py", "your name"
    )
    assert code == 0, err
    assert app_lines(err) == ["Hello, your name!"]
    code, out, _ = torchx("run", "--scheduler", "local_docker", "dist.ddp", "--help")
    assert code == 0 and "-j" in out
    # what needs a container engine or a cluster: the request is built as written (the
    # image as it is: building the project into it needs an engine and an image_repo)
    for scheduler in ("local_docker", "slurm", "kubernetes", "ray"):
        code, _, err = torchx(
            "run", "--dryrun", "--scheduler", scheduler, "--workspace", "", "dist.ddp",
            "-j", "2x2", "--script", "dist_app.py",
        )  # fmt: skip
        assert code == 0, (scheduler, err)
    code, out, _ = torchx("runopts")
    assert code == 0 and "local_cwd" in out and "slurm" in out


# -- custom_components.md -----------------------------------------------------------------

CUSTOM_APP = """\
import sys
import argparse


def main(user: str) -> None:
    print(f"Hello, {user}!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="Hello world app"
    )
    parser.add_argument(
        "--user",
        type=str,
        help="the person to greet",
        required=True,
    )
    args = parser.parse_args(sys.argv[1:])

    main(args.user)
"""

CUSTOM_COMPONENT = """\
import torchx.specs as specs


def greet(user: str, image: str = "my_app:latest") -> specs.AppDef:
    return specs.AppDef(
        name="hello_world",
        roles=[
            specs.Role(
                name="greeter",
                image=image,
                entrypoint="python",
                args=[
                    "-m", "my_app",
                    "--user", user,
                ],
            )
        ],
    )
"""


def test_custom_components(project: Path) -> None:
    (project / "my_app.py").write_text(CUSTOM_APP)
    (project / "my_component.py").write_text(CUSTOM_COMPONENT)
    code, _, err = torchx(
        "run", "--scheduler", "local_cwd", "my_component.py:greet", "--user", "your name"
    )
    assert code == 0, err
    assert app_lines(err) == ["Hello, your name!"]
    code, out, err = torchx(
        "run", "--dryrun", "--scheduler", "local_docker", "--workspace", "",
        "my_component.py:greet", "--image", "my_app:latest", "--user", "your name",
    )  # fmt: skip
    assert code == 0, err
    assert "my_app:latest" in out
    code, out, _ = torchx("builtins")
    assert code == 0 and re.search(r"^ +\d+\. utils\.echo$", out, re.M)
    code, _, err = torchx("run", "utils.echo", "--msg", "Hello :)")
    assert code == 0 and app_lines(err) == ["Hello :)"]


# -- the CLI page (torchx.cli) ------------------------------------------------------------

MY_TRAINER_SPEC = """\
import torchx.specs as specs


def my_trainer(foo: int, bar: str) -> specs.AppDef:
    return specs.AppDef(
        name="trainer",
        roles=[specs.Role(name="trainer", image="/tmp", entrypoint="echo", args=[str(foo), bar])],
    )
"""


def test_cli_page(project: Path) -> None:
    code, out, _ = torchx("builtins")
    assert out.startswith("Found ") and " builtin components:\n" in out
    code, _, err = torchx("run", "--scheduler", "local_cwd", "utils.echo")
    assert code == 0 and app_lines(err) == ["hello world"]
    code, _, err = torchx("run", "--scheduler", "local_cwd", "torchx.components.utils.echo")
    assert code == 0 and app_lines(err) == ["hello world"], err
    spec = Path.home() / "my_trainer_spec.py"
    spec.write_text(MY_TRAINER_SPEC)
    code, _, err = torchx(
        "run", "--scheduler", "local_cwd", "~/my_trainer_spec.py:my_trainer", "--foo", "1",
        "--bar", "x",
    )  # fmt: skip
    assert code == 0 and app_lines(err) == ["1 x"], err
    assert torchx("run", "--help")[0] == 0
    code, out, _ = torchx("runopts", "local_cwd")
    assert code == 0 and "log_dir" in out
    logs = project / "logs"
    user = os.environ.get("USER", "me")
    code, out, err = torchx(
        "run", "--scheduler", "local_cwd", "--scheduler_args", f"log_dir={logs}", "utils.echo",
        "--msg", f"hello {user}",
    )  # fmt: skip
    assert code == 0 and app_lines(err) == [f"hello {user}"]
    assert out.startswith("local_cwd://torchx/echo-") and logs.is_dir()
    code, out, _ = torchx("run", "--scheduler", "local_cwd", "utils.echo", "--help")
    assert code == 0 and "--msg" in out
    code, out, _ = torchx("run", "--dryrun", "utils.echo", "--msg", "hello_world")
    assert code == 0 and "=== APPLICATION ===" in out and "=== SCHEDULER REQUEST ===" in out
    assert "echo hello_world" in out
    # the dryrun started nothing: still the three apps run above
    assert torchx("list", "--json")[1].count('"app_id": "echo-') == 3


# -- the .torchxconfig page (torchx.runner.config) ----------------------------------------

TRAIN_COMPONENT = """\
import torchx.specs as specs


def train(msg: str = "trained") -> specs.AppDef:
    return specs.AppDef(
        name="train", roles=[specs.Role(name="train", image="/tmp", entrypoint="echo", args=[msg])]
    )
"""


def test_configuration_page(project: Path) -> None:
    code, _, err = torchx("configure", "-s", "local_cwd,kubernetes")
    assert code == 0, err
    text = (project / ".torchxconfig").read_text()
    assert "[local_cwd]" in text and "[kubernetes]" in text
    (project / "my_component.py").write_text(TRAIN_COMPONENT)
    code, _, err = torchx("run", "-s", "local_cwd", "./my_component.py:train")
    assert code == 0 and app_lines(err) == ["trained"], err

    # component defaults: `torchx run -s local_cwd dist.ddp` runs with -j 2x8 --cpu 4
    (project / ".torchxconfig").write_text("[component:dist.ddp]\nj=2x8\ncpu=4\nscript=train.py\n")
    code, out, err = torchx("run", "--dryrun", "-s", "local_cwd", "dist.ddp")
    assert code == 0, err
    assert "--nnodes 2 --nproc_per_node 8" in out

    # [cli:run] defaults, with the workspace written as a file:// URL
    (project / "some_workspace").mkdir()
    (project / ".torchxconfig").write_text(
        "[cli:run]\ncomponent=utils.echo\nscheduler=local_cwd\nworkspace=file://some_workspace\n"
    )
    code, out, err = torchx("run", "--dryrun", "--msg", "from the config")
    assert code == 0, err
    assert "echo 'from the config'" in out and "some_workspace" in out

    # a user-level file under the project's, key by key; TORCHXCONFIG alone when set
    (project / ".torchxconfig").write_text("[local_cwd]\nlog_dir = project_logs\n")
    (Path.home() / ".torchxconfig").write_text(
        "[local_cwd]\nlog_dir = home_logs\nprepend_cwd = True\n"
    )
    from torchx.runner.config import apply

    cfg: dict[str, object] = {"log_dir": "/these/take/outmost/precedence"}
    apply("local_cwd", cfg, dirs=[str(Path.home())])  # type: ignore[arg-type]
    assert cfg == {"log_dir": "/these/take/outmost/precedence", "prepend_cwd": True}
    cfg = {}
    apply("local_cwd", cfg, dirs=[str(Path.home())])  # type: ignore[arg-type]
    assert cfg["log_dir"] == "home_logs"


# -- runner.rst (torchx.runner) -----------------------------------------------------------


def test_runner_api_as_written(project: Path) -> None:
    from torchx.runner import get_runner
    from torchx.specs import AppState

    components = project / "components.py"
    components.write_text(TRAIN_COMPONENT)
    with get_runner() as runner:
        app_handle = runner.run_component(str(components) + ":train", ["--msg", "hi"])
        status = runner.wait(app_handle, wait_interval=0.2)
        assert status is not None and status.state == AppState.SUCCEEDED
        dryrun_info = runner.dryrun_component("utils.echo", ["--msg", "hi"], "local_cwd")
        assert dryrun_info.request is not None
        app_handle = runner.schedule(dryrun_info)
        assert app_handle.startswith("local_cwd://torchx/echo-")
        status = runner.wait(app_handle, wait_interval=0.2)
        assert status is not None and status.state == AppState.SUCCEEDED
        assert [ln.rstrip("\n") for ln in runner.log_lines(app_handle, "echo", 0)] == ["hi"]
