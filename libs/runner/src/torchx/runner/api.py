"""pytorch/torchx's ``torchx.runner.api``: the Runner and ``get_runner``, defined in
``torchx.runner``."""

from torchx.runner._runner import Runner, get_runner
from torchx.specs import NONE

__all__ = ["NONE", "Runner", "get_runner"]
