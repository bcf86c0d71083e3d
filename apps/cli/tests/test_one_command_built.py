"""A command line builds only the builtin command it runs (typer builds every command's
options up front otherwise); what each command prints and accepts stays the same."""

from __future__ import annotations

import pytest
import typer.main

from torchx.cli._app import app
from torchx.cli._typer_main import _only, run_builtin
from torchx.cli.main import BUILTIN_COMMANDS


def _built(args: list[str], name: str | None) -> list[str]:
    group = typer.main.get_command(_only(app, args, name))
    return sorted(group.commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", BUILTIN_COMMANDS)
def test_only_the_named_command_is_built(name: str) -> None:
    assert _built([name, "--help"], name) == [name]
    assert _built(["--debug", name], name) == [name]


def test_the_full_app_serves_its_own_help_and_unknown_names() -> None:
    everything = sorted(BUILTIN_COMMANDS)
    assert _built([], None) == everything
    assert _built(["--help", "run"], "run") == everything
    assert _built(["-h", "list"], "list") == everything
    assert _built(["no-such-command"], "no-such-command") == everything
    assert _built(["run"], "list") == everything  # a name that is not on the line


def test_command_signatures_are_evaluated_at_import() -> None:
    # typer reads them on every start: string annotations would be evaluated each time
    callbacks = [info.callback for info in app.registered_commands]
    assert callbacks and app.registered_callback is not None
    callbacks.append(app.registered_callback.callback)
    strings = [
        f"{fn.__name__}.{param}"
        for fn in callbacks
        if fn is not None
        for param, annotation in fn.__annotations__.items()
        if isinstance(annotation, str)
    ]
    assert strings == []


def test_shell_completion_sees_every_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_TORCHX_COMPLETE", "complete_bash")
    assert _built(["run"], "run") == sorted(BUILTIN_COMMANDS)


@pytest.mark.parametrize(
    "args",
    [[name, "--help"] for name in BUILTIN_COMMANDS]
    + [["run", "--no-such-option"], ["status"], ["tracker", "list", "--help"]],
)
def test_output_and_exit_code_match_the_full_app(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    full = run_builtin(args)
    full_out = capsys.readouterr()
    one = run_builtin(args, args[0])
    one_out = capsys.readouterr()
    assert (one, one_out.out, one_out.err) == (full, full_out.out, full_out.err)
    assert full_out.out or full_out.err  # the command really printed something
