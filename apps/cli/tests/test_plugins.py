"""Plug-ins installed as a user's package would be (a dist-info with entry points on
PYTHONPATH), used through the real ``torchx`` command: CLI subcommands
(``torchx.cli.cmds``), schedulers (``torchx.schedulers``) and trackers (``torchx.tracker``).
One broken plug-in is named in a warning and does not break the rest."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TORCHX = str(Path(sys.executable).with_name("torchx"))

PLUGIN_MODULE = textwrap.dedent(
    '''
    import argparse
    import os
    import time
    from typing import Optional

    from torchx.cli.cmd_base import SubCommand
    from torchx.schedulers.api import DescribeAppResponse, Scheduler
    from torchx.specs import AppDef, AppDryRunInfo, AppState, runopts


    class CmdHello(SubCommand):
        def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
            subparser.add_argument("--name", type=str, required=True)
            subparser.add_argument("--fail", action="store_true")

        def run(self, args: argparse.Namespace) -> None:
            if args.fail:
                raise RuntimeError("hello failed on purpose")
            print(f"hello {args.name}")


    class NoLogScheduler(Scheduler):
        """0.7-style: dryrun, schedule, describe, cancel; keeps no logs."""

        def __init__(self, session_name: str, **kwargs: object) -> None:
            super().__init__("nolog", session_name)
            self.root = os.environ["NOLOG_DIR"]

        def _run_opts(self) -> runopts:
            return runopts()

        def _submit_dryrun(self, app: AppDef, cfg) -> AppDryRunInfo:
            return AppDryRunInfo({"name": app.name}, repr)

        def schedule(self, dryrun_info: AppDryRunInfo) -> str:
            app_id = f"{dryrun_info.request['name']}-{int(time.time() * 1e6)}"
            with open(os.path.join(self.root, app_id), "w") as f:
                f.write(str(time.time()))
            return app_id

        def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
            path = os.path.join(self.root, app_id)
            if not os.path.exists(path):
                return None
            started = float(open(path).read())
            done = time.time() - started > 0.5
            return DescribeAppResponse(
                app_id=app_id, state=AppState.SUCCEEDED if done else AppState.RUNNING
            )

        def _cancel_existing(self, app_id: str) -> None:
            pass


    def create_scheduler(session_name: str, **kwargs: object) -> NoLogScheduler:
        return NoLogScheduler(session_name, **kwargs)
    '''
)

ENTRY_POINTS = """\
[torchx.cli.cmds]
hello = cli_plugin:CmdHello
broken = cli_plugin_missing:CmdBroken
run = cli_plugin:CmdHello

[torchx.schedulers]
nolog = cli_plugin:create_scheduler
brokensched = cli_plugin_missing:create_scheduler

[torchx.tracker]
brokentracker = cli_plugin_missing:create
"""


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "cli_plugin.py").write_text(PLUGIN_MODULE)
    dist = site / "cli_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cli-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    nolog = tmp_path / "nolog"
    nolog.mkdir()
    return {**os.environ, "PYTHONPATH": str(site), "NOLOG_DIR": str(nolog)}


def _torchx(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TORCHX, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_plugin_subcommand_runs(plugin_env: dict[str, str]) -> None:
    out = _torchx(plugin_env, "hello", "--name", "world")
    assert (out.returncode, out.stdout) == (0, "hello world\n"), out.stderr
    # The broken plug-in and the one named like a builtin are each named in a warning.
    assert "command plug-in 'broken' (cli_plugin_missing:CmdBroken)" in out.stderr
    assert "command plug-in 'run' (cli_plugin:CmdHello) is named like a builtin" in out.stderr
    # Global options before the command apply to it.
    out = _torchx(plugin_env, "--log_level", "INFO", "hello", "--name", "x")
    assert out.returncode == 0 and out.stdout == "hello x\n"


def test_a_plugin_subcommands_errors(plugin_env: dict[str, str]) -> None:
    out = _torchx(plugin_env, "hello")
    assert out.returncode == 2 and "--name" in out.stderr  # argparse's usage error
    out = _torchx(plugin_env, "hello", "--name", "x", "--fail")
    assert out.returncode == 2
    assert "torchx: error: hello: hello failed on purpose" in out.stderr
    assert "Traceback" not in out.stderr
    out = _torchx(plugin_env, "hello", "--name", "x", "--bogus")
    assert out.returncode == 2 and "unrecognized arguments: --bogus" in out.stderr
    # an option of torchx itself after the command: where it goes, as for the builtins
    out = _torchx(plugin_env, "hello", "--name", "x", "--debug")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.splitlines()[-1] == (
        "torchx: error: torchx hello: got '--debug'; --debug is an option of torchx itself:"
        " put it before the command (torchx --debug ... hello ...)"
    )
    out = _torchx(plugin_env, "broken")
    assert out.returncode == 2 and "No such command 'broken'" in out.stderr
    assert "could not be loaded" in out.stderr


def test_builtins_are_not_replaced_and_keep_working(plugin_env: dict[str, str]) -> None:
    out = _torchx(plugin_env, "run", "--dryrun", "utils.echo", "--msg", "hi")
    assert out.returncode == 0 and "echo hi" in out.stdout and "hello" not in out.stdout
    out = _torchx(plugin_env, "builtins")
    assert out.returncode == 0 and "utils.echo" in out.stdout


def test_a_broken_scheduler_plugin_is_left_out_of_runopts(plugin_env: dict[str, str]) -> None:
    out = _torchx(plugin_env, "runopts")
    assert out.returncode == 0, out.stderr
    assert "local_cwd:" in out.stdout and "nolog:" in out.stdout
    assert "brokensched" not in out.stdout
    assert "scheduler 'brokensched' is left out" in out.stderr
    out = _torchx(plugin_env, "configure", "--print")
    assert out.returncode == 0 and "[local_cwd]" in out.stdout
    assert "brokensched" in out.stderr
    # Asked for by name, the broken one is an error that says why.
    out = _torchx(plugin_env, "runopts", "brokensched")
    assert out.returncode == 2 and "cli_plugin_missing" in out.stderr


def test_run_wait_on_a_scheduler_without_logs_shows_the_final_status(
    plugin_env: dict[str, str],
) -> None:
    out = _torchx(plugin_env, "run", "--wait", "-s", "nolog", "utils.echo", "--msg", "hi")
    assert out.returncode == 0, out.stderr
    handle = out.stdout.strip()
    assert handle.startswith("nolog://")
    assert "not showing the logs" in out.stderr
    assert f"{handle} SUCCEEDED" in out.stderr


def test_an_unrelated_broken_tracker_plugin_does_not_matter(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec = fsspec\n\n[tracker:fsspec]\nconfig = {runs}\n"
    )
    env = {**plugin_env, "TORCHXCONFIG": str(tmp_path / ".torchxconfig")}
    out = _torchx(env, "tracker", "list", "jobs")
    assert out.returncode == 0, out.stderr


def test_the_argparse_front_end_lists_builtins_and_plugins(plugin_env: dict[str, str]) -> None:
    code = (
        "from torchx.cli.main import get_sub_cmds, get_default_sub_cmds, create_parser\n"
        "cmds = get_sub_cmds()\n"
        "assert set(get_default_sub_cmds()) < set(cmds), cmds\n"
        "print(sorted(cmds))\n"
        "args = create_parser(cmds).parse_args(['hello', '--name', 'p'])\n"
        "args.func(args)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=plugin_env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "'hello'" in lines[0] and "'broken'" not in lines[0]
    assert lines[1] == "hello p"
    assert "command plug-in 'broken' could not be loaded" in out.stderr


def test_the_argparse_front_end_lets_a_plugin_replace_a_builtin(
    plugin_env: dict[str, str],
) -> None:
    # As in pytorch/torchx, for tools built on get_sub_cmds (the torchx command does not).
    code = "from torchx.cli.main import get_sub_cmds\nprint(type(get_sub_cmds()['run']).__name__)\n"
    out = subprocess.run(
        [sys.executable, "-c", code], env=plugin_env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout == "CmdHello\n", out.stderr


def _complete(env: dict[str, str], words: str) -> list[str]:
    """What bash completion offers for the last of ``words`` (the real ``torchx``)."""
    env = {**env, "_TORCHX_COMPLETE": "complete_bash", "COMP_WORDS": words}
    env["COMP_CWORD"] = str(len(words.split(" ")) - 1)
    out = subprocess.run(
        [TORCHX], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_a_plugin_scheduler_is_completed_where_a_scheduler_is_named(
    plugin_env: dict[str, str],
) -> None:
    assert _complete(plugin_env, "torchx run -s no") == ["nolog"]
    assert _complete(plugin_env, "torchx runopts no") == ["nolog"]
