"""Mistakes of a first session with the CLI: each gets one line naming what to fix."""

from __future__ import annotations

import json
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


def test_status_of_a_role_the_app_does_not_have_names_its_roles(isolated: Path) -> None:
    code, out, _ = invoke("run", "--json", "utils.echo", "--msg", "hi")
    assert code == 0, out
    handle = json.loads(out)["handle"]
    for extra in ((), ("--json",)):
        code, out, err = invoke("status", "--roles", "ecko", *extra, handle)
        assert (code, out) == (2, "")
        assert err == "torchx: error: --roles: got 'ecko'; the app's roles are echo\n"
    code, out, _ = invoke("status", "--roles", "echo", handle)
    assert code == 0 and "echo[0]:SUCCEEDED" in out
