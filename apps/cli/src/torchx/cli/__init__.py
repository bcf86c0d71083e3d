"""torchx.cli: the ``torchx`` command, a thin typer layer over torchx.runner."""

from torchx.cli.main import main, run

__all__ = ["main", "run"]
