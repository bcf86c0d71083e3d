"""Mistakes of a first session with the CLI: each gets one line naming what to fix."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from torchx.cli._app import app

cli = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_an_error_raised_by_a_component_names_the_component(isolated: Path) -> None:
    (isolated / "comp.py").write_text(
        "import torchx.specs as specs\n\n"
        "def fn(x: int) -> specs.AppDef:\n"
        "    raise ValueError('x must be even')\n"
    )
    code, out, err = invoke("run", "--dryrun", "./comp.py:fn", "--x", "1")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "torchx: error: ValueError: x must be even (raised by component ./comp.py:fn; fix the "
        "component or the arguments given to it; --debug shows the traceback)"
    ]
