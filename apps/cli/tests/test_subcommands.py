"""The builtin commands as pytorch/torchx 0.7 SubCommand objects, its argparse front end
(``torchx.cli.main``), ``argparse_util`` and ``cmd_log``'s helpers."""

from __future__ import annotations

import argparse
import io
import queue
import time
from pathlib import Path

import pytest
import typer.main

from torchx.cli import main as cli_main
from torchx.cli.argparse_util import ArgOnceAction, torchxconfig, torchxconfig_run
from torchx.cli.cmd_base import SubCommand


def _parse(cmd: SubCommand, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    return parser.parse_args(argv)


def test_builtin_command_names_are_the_apps() -> None:
    from torchx.cli._app import app

    group = typer.main.get_command(app)
    assert sorted(group.commands) == sorted(cli_main.BUILTIN_COMMANDS)  # type: ignore[attr-defined]
    # pytorch/torchx 0.7's commands, each as a SubCommand.
    assert set(cli_main.get_default_sub_cmds()) <= set(cli_main.BUILTIN_COMMANDS)
    assert len(cli_main.get_default_sub_cmds()) == 10
    assert all(isinstance(c, SubCommand) for c in cli_main.get_default_sub_cmds().values())


def test_run_status_log_describe_cancel_list_as_subcommands(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cmds = cli_main.get_default_sub_cmds()
    run = cmds["run"]
    run.run(_parse(run, ["--wait", "--log", "utils.sh", "echo", "from-subcommand"]))
    out = capsys.readouterr()
    handle = out.out.strip()
    assert handle.startswith("local_cwd://") and "from-subcommand" in out.err

    cmds["status"].run(_parse(cmds["status"], [handle, "--roles", "sh"]))
    assert "sh[0]:SUCCEEDED" in capsys.readouterr().out
    for name, argv in (("describe", [handle]), ("list", [])):
        cmds[name].run(_parse(cmds[name], argv))
        assert ("sh" if name == "describe" else handle) in capsys.readouterr().out

    cmds["log"].run(_parse(cmds["log"], [handle]))
    assert "sh/0 from-subcommand" in capsys.readouterr().out
    # Cancelling an app that has ended leaves it as it was (Runner.cancel, as in 0.7).
    cmds["cancel"].run(_parse(cmds["cancel"], [handle]))
    cmds["status"].run(_parse(cmds["status"], [handle]))
    assert "State: SUCCEEDED" in capsys.readouterr().out

    # An app the scheduler does not know: exit code 1 and one line naming it.
    with pytest.raises(SystemExit) as e:
        cmds["status"].run(_parse(cmds["status"], ["local_cwd://x/no-such-app"]))
    assert e.value.code == 1
    assert "does not know app 'no-such-app'" in capsys.readouterr().err


def test_run_takes_the_component_from_torchxconfig(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from torchx.cli.cmd_run import MISSING_COMPONENT_ERROR_MSG, CmdRun

    cmd = CmdRun()
    with pytest.raises(SystemExit) as e:
        cmd.run(_parse(cmd, ["--dryrun"]))
    assert e.value.code == 2
    assert "missing component name" in capsys.readouterr().err
    assert "missing component name" in MISSING_COMPONENT_ERROR_MSG
    (tmp_path / ".torchxconfig").write_text("[cli:run]\ncomponent = utils.echo\n")
    cmd.run(_parse(cmd, ["--dryrun"]))
    assert "echo 'hello world'" in capsys.readouterr().out


def test_run_main_and_create_parser(capsys: pytest.CaptureFixture[str]) -> None:
    cli_main.run_main(cli_main.get_default_sub_cmds(), ["builtins"])
    assert "utils.echo" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        cli_main.run_main(cli_main.get_default_sub_cmds(), [])
    assert e.value.code == 1
    parser = cli_main.create_parser({"runopts": cli_main.get_default_sub_cmds()["runopts"]})
    args = parser.parse_args(["runopts", "local_cwd"])
    args.func(args)
    assert "log_dir" in capsys.readouterr().out
    assert "torchx run" in cli_main.sub_parser_description


def test_argparse_util_actions(tmp_path: Path) -> None:
    (tmp_path / ".torchxconfig").write_text("[cli:run]\nscheduler = local_dir\n")
    parser = argparse.ArgumentParser()
    parser.add_argument("-s", "--scheduler", action=torchxconfig_run, required=True)
    parser.add_argument("--x", action=ArgOnceAction)
    sub = argparse.ArgumentParser()
    sub.add_argument("--y", action=torchxconfig, subcmd="other", default="dflt")
    # The file's value is the default, so the option is no longer required.
    assert parser.parse_args([]).scheduler == "local_dir"
    assert parser.parse_args(["-s", "ray", "--x", "1"]).scheduler == "ray"
    assert parser.parse_args(["-s", "ray", "--x", "1"]).x == "1"  # a new parse starts afresh
    assert sub.parse_args([]).y == "dflt"
    with pytest.raises(SystemExit) as e:
        parser.parse_args(["--x", "1", "--x", "2"])
    assert e.value.code == 1


def test_cmd_log_helpers() -> None:
    from torchx.cli import cmd_log
    from torchx.specs import AppDef, Role

    cmd_log.validate("local_cwd://session/app/role/0,1")
    with pytest.raises(SystemExit):
        cmd_log.validate("not-a-handle")
    app = AppDef("a", [Role("x", image="", num_replicas=2), Role("y", image="")])
    assert cmd_log.find_role_replicas(app, None) == [("x", 0), ("x", 1), ("y", 0)]
    assert cmd_log.find_role_replicas(app, "y") == [("y", 0)]
    assert cmd_log._prefixed("p ", "a\rb\n") == "p a\rp b\n"
    # A CRLF line end is one break: no prefix after its "\r", and the "\r\n" is kept.
    assert cmd_log._prefixed("p ", "crlf line\r\n") == "p crlf line\r\n"
    assert cmd_log._prefixed("p ", "a\r\nb\rc\r\n") == "p a\r\np b\rp c\r\n"
    assert cmd_log._prefixed("p ", "last") == "p last"


def test_get_logs_of_chosen_replicas(tmp_path: Path) -> None:
    from torchx.cli.cmd_log import get_logs, print_log_lines
    from torchx.runner import get_runner
    from torchx.specs import AppDef, Role

    app = AppDef(
        "two",
        [
            Role(
                "r",
                image=str(tmp_path),
                entrypoint="sh",
                args=["-c", "echo rank$RANK"],
                num_replicas=2,
            )
        ],
    )
    with get_runner() as runner:
        handle = runner.run(app, "local_cwd")
        runner.wait(handle, wait_interval=0.2)
        out = io.StringIO()
        get_logs(out, f"{handle}/r/1", regex=None, runner=runner)
        assert out.getvalue() == "r/1 rank1\n"
        out = io.StringIO()
        get_logs(out, handle, regex="rank0", runner=runner)
        assert out.getvalue() == "r/0 rank0\n"
        errors: queue.Queue[Exception] = queue.Queue()
        with pytest.raises(Exception, match="replica"):
            print_log_lines(io.StringIO(), runner, handle, "r", 5, None, False, errors, None)
        assert not errors.empty()
    assert time.time() > 0


def test_cmd_tracker_lists_what_a_real_tracker_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchx.cli.cmd_tracker import CmdTracker
    from torchx.tracker.backend.fsspec import create

    for key in ("TORCHX_TRACKERS", "TORCHX_TRACKER_FSSPEC_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(RuntimeError, match="no tracker configured"):
        _ = CmdTracker().tracker
    root = tmp_path / "runs"
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={root}\n"
    )
    parent, child = "local_cwd://s/train-1", "local_cwd://s/eval-2"
    tracker = create(str(root))
    tracker.add_metadata(parent, lr=0.1)
    tracker.add_artifact(parent, "model", "/ckpt/model.pt", {"epoch": 3})
    tracker.add_source(child, parent, artifact_name="model")

    parser = cli_main.create_parser({"tracker": CmdTracker()})

    def run(*argv: str) -> list[list[str]]:
        args = parser.parse_args(["tracker", *argv])
        args.func(args)
        return [line.split() for line in capsys.readouterr().out.splitlines()]

    assert run("list", "jobs") == [["JOB", "ID"], [child], [parent]]
    assert run("list", "jobs", "--parent-run-id", parent) == [["JOB", "ID"], [child]]
    assert run("list", "metadata", parent)[1] == ["lr", "0.1"]
    assert run("list", "artifacts", parent)[1][:2] == ["model", "/ckpt/model.pt"]
    assert run("list", "lineage", parent)[1] == ["descendant", child, "model"]
    assert run("list", "lineage", "--sources-only", child)[1] == ["source", parent, "model"]

    # a record that cannot be read: named in one line, as `torchx tracker` names it
    [record] = root.glob("*/artifacts/*.json")
    record.write_text("{")
    args = parser.parse_args(["tracker", "list", "artifacts", parent])
    args.func(args)
    out, err = capsys.readouterr()
    assert out.split() == ["ARTIFACT", "PATH", "METADATA"]
    assert err == (
        f"torchx: warning: corrupt tracker record at {str(record)!r} was not read: not valid"
        " JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1));"
        " move the file out of the run's folder (or restore it) to read the run without it;"
        " without it, its artifact may show an older record, or none\n"
    )


def test_cmd_tracker_lineage_from_a_backend_written_for_07(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from torchx.cli.cmd_tracker import CmdTracker
    from torchx.tracker import Lineage, TrackerBase
    from torchx.tracker.backend.fsspec import FsspecTracker, create

    class Lineageless(FsspecTracker):  # 0.7's own backends raised here, as plugins may
        def lineage(self, run_id: str) -> Lineage:
            raise NotImplementedError

    backend = Lineageless(create(str(tmp_path)).fs, str(tmp_path))
    backend.add_source("local_cwd://s/eval-2", "local_cwd://s/train-1", artifact_name="model")

    class OnThatBackend(CmdTracker):
        @property
        def tracker(self) -> TrackerBase:
            return backend

    cli_main.run_main(
        {"tracker": OnThatBackend()}, ["tracker", "list", "lineage", "local_cwd://s/train-1"]
    )
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines()[1].split() == ["descendant", "local_cwd://s/eval-2", "model"]


def test_cmd_tracker_subclass_handler_set_in_its_hook_wins(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A 0.7-style subclass that points a list kind at its own handler from its
    ``add_*_arguments`` hook gets that handler run, not the built-in one."""
    from torchx.cli.cmd_tracker import CmdTracker

    class OwnMetadata(CmdTracker):
        def add_metadata_arguments(self, subparser: argparse.ArgumentParser) -> None:
            super().add_metadata_arguments(subparser)
            subparser.set_defaults(func=self.own_metadata)

        def own_metadata(self, args: argparse.Namespace) -> None:
            print("own metadata of", args.RUN_ID)

    cli_main.run_main({"tracker": OwnMetadata()}, ["tracker", "list", "metadata", "r1"])
    assert capsys.readouterr().out == "own metadata of r1\n"
