from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchx.cli._component_args import RUN_FLAGS, read_component, split_component
from torchx.cli._errors import ROOT_FLAGS, CliError
from torchx.components import get_component


def test_one_dash_works_for_one_letter_arguments_only_before_the_script_args() -> None:
    schema = get_component("dist.ddp")
    parsed = schema.read(["-j", "2", "-m", "pkg.train", "--debug", "--", "-m", "x", "-h"])
    assert not parsed.help and parsed.rest_after_dashdash
    assert (parsed.values["j"], parsed.values["m"], parsed.values["debug"]) == (
        "2",
        "pkg.train",
        True,
    )
    assert schema.bind(parsed)[0] == ["-m", "x", "-h"]
    # the first word and everything after it are the program's, as 0.7's REMAINDER
    parsed = schema.read(["--script", "t.py", "epochs", "-j", "3"])
    assert parsed.rest == ["epochs", "-j", "3"] and not parsed.rest_after_dashdash


def test_help_is_the_components_only_among_its_own_options() -> None:
    schema = get_component("utils.python")
    assert schema.read(["--c", "print(1)", "--help"]).help
    assert get_component("utils.echo").read(["-h"]).help  # echo has no argument h
    assert not schema.read(["--c", "print(1)", "--", "--help"]).help
    assert not schema.read(["--c", "print(1)", "script-arg", "--help"]).help
    # help wins over a mistyped flag before it, as argparse's --help action does
    assert get_component("utils.echo").read(["--mgs", "x", "--help"]).help


def test_torchx_run_flags_match_the_run_command() -> None:
    import typer.main

    from torchx.cli._app import app

    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    flags = {o for p in command.params for o in [*p.opts, *p.secondary_opts] if o.startswith("-")}
    assert flags == set(RUN_FLAGS)


def test_root_flags_are_the_options_of_torchx_itself() -> None:
    import typer.main

    from torchx.cli._app import app

    command = typer.main.get_command(app)
    flags = {o for p in command.params for o in [*p.opts, *p.secondary_opts] if o.startswith("--")}
    assert set(ROOT_FLAGS) <= flags
    # the rest only print something and exit: they change no command
    # (--help is click's own, not among the params)
    assert flags - ROOT_FLAGS == {
        "--version",
        "--install-completion",
        "--show-completion",
    }


def test_a_root_flag_after_run_is_refused_naming_where_it_goes() -> None:
    where = r"--log_level is an option of torchx itself: put it before the command \(torchx --log"
    with pytest.raises(CliError, match=where):
        split_component("--log_level=DEBUG", ["utils.echo"], lambda: None)
    with pytest.raises(CliError, match=where):
        read_component("utils.echo", ["--msg", "hi", "--log_level", "DEBUG"])
    # the component is named after it: the error is about the flag, not a missing component
    for argv in (["--log_level", "DEBUG", "utils.echo"], ["--debug", "utils.echo"]):
        with pytest.raises(CliError) as e:
            split_component(argv[0], argv[1:], lambda: None)
        flag = argv[0]
        assert str(e.value) == (
            f"torchx run: got {flag!r}; {flag} is an option of torchx itself: put it before "
            f"the command (torchx {flag} ... run COMPONENT ...)"
        )
    # before the component or after it, the token is quoted as written
    with pytest.raises(CliError, match=r"^torchx run: got '--log_level=DEBUG'; "):
        split_component("--log_level=DEBUG", ["utils.echo"], lambda: None)
    with pytest.raises(CliError, match=r"^utils\.echo argument: got '--log_level=DEBUG'; "):
        read_component("utils.echo", ["--log_level=DEBUG"])
    # a component's own argument of that name is still the component's
    _, parsed = read_component("dist.ddp", ["--script", "t.py", "--debug"])
    assert parsed.values["debug"] is True


def test_a_run_flag_after_the_component_is_refused_naming_where_it_goes() -> None:
    for argv in (
        ["-j", "2x2", "--script", "t.py", "--dryrun"],
        ["-s", "slurm", "--script", "t.py"],
    ):
        with pytest.raises(
            CliError, match=r"is an option of torchx run, not of dist\.ddp: put it before"
        ):
            read_component("dist.ddp", argv)
    with pytest.raises(CliError, match="among the program's arguments"):
        read_component("dist.ddp", ["--script", "t.py", "epochs", "--dryrun"])
    # after ``--`` it is the program's
    _, parsed = read_component("dist.ddp", ["--script", "t.py", "--", "--dryrun"])
    assert parsed.rest == ["--dryrun"]


def test_shell_completion_offers_component_names() -> None:
    torchx = str(Path(sys.executable).with_name("torchx"))
    env = {**os.environ, "_TORCHX_COMPLETE": "complete_bash"}
    env.update(COMP_WORDS="torchx run utils.ec", COMP_CWORD="2")
    proc = subprocess.run([torchx], env=env, capture_output=True, text=True, check=False)
    assert proc.stdout.split() == ["utils.echo"]


def test_dash_h_is_the_named_resource_of_a_component_that_takes_h() -> None:
    # as with pytorch/torchx: `torchx run dist.ddp -h gpu.small ...` launches on gpu.small
    schema = get_component("dist.ddp")
    parsed = schema.read(["-h", "gpu.small", "-j", "2", "--script", "t.py"])
    assert not parsed.help and parsed.values["h"] == "gpu.small"
    app = schema.call_parsed(parsed)
    assert app.roles[0].resource.gpu == 1 and app.roles[0].resource.memMB == 32 * 1024
    assert schema.read(["--help"]).help
    # a bare -h (no value follows) is the help, not "got None"
    assert schema.read(["-h"]).help
    assert schema.read(["--script", "t.py", "-h"]).help


def _complete(words: str) -> list[str]:
    torchx = str(Path(sys.executable).with_name("torchx"))
    env = {**os.environ, "_TORCHX_COMPLETE": "complete_bash"}
    env.update(
        COMP_WORDS=words, COMP_CWORD=str(len(words.split()) - (0 if words.endswith(" ") else 1))
    )
    proc = subprocess.run([torchx], env=env, capture_output=True, text=True, check=False)
    return proc.stdout.split()


def test_shell_completion_offers_scheduler_names_and_the_components_flags() -> None:
    assert _complete("torchx run -s local_") == ["local_cwd", "local_dir", "local_docker"]
    assert _complete("torchx list -s sl") == ["slurm"]
    assert _complete("torchx run utils.echo --") == ["--msg", "--image", "--num_replicas", "--help"]
    assert _complete("torchx run utils.echo --m") == ["--msg"]
