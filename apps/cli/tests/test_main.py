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


def test_an_interrupt_says_what_it_left_running_on_its_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import torchx.cli._component_args
    from torchx.cli.main import main
    from torchx.util.notes import add_note

    def interrupted(*args: object, **kwargs: object) -> None:
        stop = KeyboardInterrupt()
        add_note(stop, "the sweep local_cwd://torchx/sweep-a was submitted")
        raise stop

    monkeypatch.setattr(torchx.cli._component_args, "component_of_command_line", interrupted)
    assert main(["run", "--dryrun", "utils.echo", "--msg", "hi"]) == 130
    err = capsys.readouterr().err
    assert err == "torchx: interrupted; the sweep local_cwd://torchx/sweep-a was submitted\n"


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["status", "--debug", "local_cwd://torchx/app-1"], "status"),
        (["describe", "--log_level", "INFO", "local_cwd://torchx/app-1"], "describe"),
        (["log", "--log-level=INFO", "local_cwd://torchx/app-1"], "log"),
        (["tracker", "list", "jobs", "--debug"], "tracker list jobs"),
    ],
)
def test_an_option_of_torchx_after_any_command_says_where_it_goes(
    argv: list[str], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from torchx.cli.main import main

    assert main(argv) == 2
    flag = argv[len(command.split())].partition("=")[0]
    assert capsys.readouterr() == (
        "",
        f"torchx: error: torchx {command}: got {flag!r}; {flag} is an option of torchx itself:"
        f" put it before the command (torchx {flag} ... {command} ...)\n",
    )


def test_another_unknown_option_keeps_clicks_line(capsys: pytest.CaptureFixture[str]) -> None:
    from torchx.cli.main import main

    assert main(["status", "--bogus", "local_cwd://torchx/app-1"]) == 2
    assert capsys.readouterr().err == (
        "torchx: error: No such option '--bogus'. (see 'torchx status --help')\n"
    )
    assert main(["--bogus"]) == 2
    assert (
        capsys.readouterr().err
        == "torchx: error: No such option '--bogus'. (see 'torchx --help')\n"
    )
