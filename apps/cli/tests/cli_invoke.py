"""The ``torchx`` app invoked in this process, for tests of what a command prints."""

from __future__ import annotations

from typer.testing import CliRunner

from torchx.cli._app import app

cli = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def refused(*args: str) -> str:
    """The stderr of a command that must fail with exit code 2 and print nothing else."""
    code, out, err = invoke(*args)
    assert (code, out) == (2, ""), err
    return err
