from __future__ import annotations

import pytest

import torchx.cli._typer_main
from torchx.cli.main import run


def test_ctrl_c_while_a_command_loads_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(args: list[str], name: str | None = None) -> int:
        raise KeyboardInterrupt  # as SIGINT lands while typer and the commands import

    monkeypatch.setattr(torchx.cli._typer_main, "run_builtin", interrupted)
    monkeypatch.setattr("sys.argv", ["torchx", "builtins"])
    with pytest.raises(SystemExit) as e:
        try:
            run()
        except KeyboardInterrupt:  # uncaught, it would stop the whole test session
            pytest.fail("run() let KeyboardInterrupt out: a traceback for the user")
    assert e.value.code == 130
    assert capsys.readouterr().err == "torchx: interrupted\n"


def test_ctrl_c_inside_a_builtin_command_is_the_same_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import torchx.cli._component_args
    from torchx.cli.main import main

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # as SIGINT lands once typer runs the command

    monkeypatch.setattr(torchx.cli._component_args, "component_of_command_line", interrupted)
    assert main(["run", "--dryrun", "utils.echo", "--msg", "hi"]) == 130
    assert capsys.readouterr().err == "torchx: interrupted\n"
