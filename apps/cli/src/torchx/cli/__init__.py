"""torchx.cli: the ``torchx`` command, a thin typer layer over torchx.runner.

``torchx.cli.main`` is the module of the command (``main(argv)`` returns the exit code;
``run()`` exits with it), as in pytorch/torchx.
"""

from torchx.cli.main import run

__all__ = ["run"]
