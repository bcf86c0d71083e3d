"""The base class of a ``torchx`` subcommand, for commands that packages add.

A package adds ``torchx NAME`` by subclassing :class:`SubCommand` and registering the class
under the ``torchx.cli.cmds`` entry-point group::

    [project.entry-points."torchx.cli.cmds"]
    hello = "my_pkg.cli:CmdHello"

``torchx hello ARGS`` then builds an ``argparse`` parser, lets ``add_arguments`` fill it,
parses ``ARGS`` and calls ``run`` with the result. A plug-in adds a command; it cannot
replace a builtin one (``run``, ``status``, ...).
"""

from __future__ import annotations

import abc
import argparse
import sys
from typing import TypeVar

_T = TypeVar("_T")


class SubCommand(abc.ABC):
    """One ``torchx`` subcommand: its arguments and what it does with them."""

    @abc.abstractmethod
    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        """Add this command's arguments to ``subparser``."""

    @abc.abstractmethod
    def run(self, args: argparse.Namespace) -> None:
        """Carry out the command with the parsed ``args``.

        Raise an exception to fail (the CLI prints it as one line and exits 2), or call
        ``sys.exit(code)`` to choose the exit code.
        """


def _known_or_exit(app_handle: str, found: _T | None) -> _T:
    """``found`` (what the runner answered for ``app_handle``); where it is None, say that
    the app's scheduler does not know it and exit 1."""
    if found is None:
        from torchx.specs import parse_app_handle

        scheduler, _, app_id = parse_app_handle(app_handle)
        print(f"torchx: error: {scheduler} does not know app {app_id!r}", file=sys.stderr)
        sys.exit(1)
    return found


__all__ = ["SubCommand"]
