"""A scheduler's missing client library is one line naming the torchx extra to install."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from torchx.cli import _handled
from torchx.cli._errors import install_hint
from torchx.cli._handled import handled
from torchx.schedulers import MissingDependencyError, require


def _missing() -> MissingDependencyError:
    with pytest.raises(MissingDependencyError) as e:
        require("torchx_no_such_client_lib", scheduler="local_docker", extra="docker")
    return e.value


def test_the_hint_names_the_torchx_extra_not_the_library_one() -> None:
    hint = install_hint(_missing())
    assert hint == (
        "the local_docker scheduler needs the 'torchx_no_such_client_lib' package, which is "
        'not installed; install it with: pip install "torchx[docker]"'
    )


def test_other_errors_get_no_hint() -> None:
    assert install_hint(ValueError("x")) is None
    assert install_hint(ModuleNotFoundError("No module named 'x'", name="x")) is None


def test_a_command_that_needs_a_missing_client_prints_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(_handled.debug_state, "debug", False)  # another test may have run --debug
    app = typer.Typer()

    @app.command()
    @handled
    def submit() -> None:
        require("torchx_no_such_client_lib", scheduler="ray", extra="ray")

    result = CliRunner().invoke(app, [])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "torchx: error: the ray scheduler needs the 'torchx_no_such_client_lib' package, which "
        'is not installed; install it with: pip install "torchx[ray]"'
    ]
