"""argparse actions for subcommands: an option given at most once, and defaults read
from ``[cli:COMMAND]`` in ``.torchxconfig``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, ClassVar


class _Seen:
    """The options already given while filling one namespace. It holds that namespace
    itself, so a new parse (a new namespace object) starts afresh."""

    namespace: argparse.Namespace | None = None
    options: ClassVar[set[str]] = set()

    @classmethod
    def check(
        cls, parser: argparse.ArgumentParser, namespace: argparse.Namespace, option: str | None
    ) -> None:
        if option is None:
            return
        if cls.namespace is not namespace:
            cls.namespace, cls.options = namespace, set()
        if option in cls.options:
            print(f"torchx: error: {option} is given more than once; give it once", file=sys.stderr)
            sys.exit(1)
        cls.options.add(option)


class ArgOnceAction(argparse.Action):
    """Stores the value like ``store``, but refuses the option a second time (a one-line
    error naming it, exit code 1, as in pytorch/torchx)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        _Seen.check(parser, namespace, option_string)
        setattr(namespace, self.dest, values)


class torchxconfig(ArgOnceAction):
    """An option of subcommand ``subcmd`` whose default comes from ``.torchxconfig``'s
    ``[cli:SUBCMD]`` section (key: the option's ``dest``) when it has one, else from
    ``add_argument(default=...)``. A required option found in the file is no longer
    required on the command line. Like :class:`ArgOnceAction`, it is taken once."""

    def __init__(
        self,
        subcmd: str,
        dest: str,
        option_strings: Sequence[str],
        required: bool = False,
        default: Any = None,
        **kwargs: Any,
    ) -> None:
        from torchx.runner.config import get_configs

        from_file = get_configs(prefix="cli", name=subcmd).get(dest)
        if from_file is not None:
            default = from_file
        if default:
            required = False
        super().__init__(
            option_strings=option_strings, dest=dest, default=default, required=required, **kwargs
        )


class torchxconfig_run(torchxconfig):
    """:class:`torchxconfig` for ``torchx run`` (section ``[cli:run]``)."""

    def __init__(
        self,
        dest: str,
        option_strings: Sequence[str],
        required: bool = False,
        default: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            "run",
            dest=dest,
            option_strings=option_strings,
            required=required,
            default=default,
            **kwargs,
        )


__all__ = ["ArgOnceAction", "torchxconfig", "torchxconfig_run"]
