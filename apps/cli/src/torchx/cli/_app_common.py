"""What the ``torchx`` commands share: the runner they use, how they choose a scheduler,
shell completion of scheduler names and the options several commands take.

Like every command module, it imports nothing heavy at module level.
"""

# No ``from __future__ import annotations``, as in ``_app``: typer reads each command's
# signature on every start, and string annotations would be evaluated each time.

from typing import TYPE_CHECKING, Annotated, Any

import click
import typer
import typer.core

from torchx.cli._errors import CliError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from torchx.runner import Runner, TorchxConfig


def _complete_scheduler(incomplete: str) -> list[str]:
    # the schedulers the command's runner will have, a patched or plug-in one included
    from torchx.runner import scheduler_factories

    return sorted(n for n in scheduler_factories() if n.startswith(incomplete))


SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "-s",
        "--scheduler",
        help="scheduler backend (default: local_cwd)",
        autocompletion=_complete_scheduler,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
# run options, as `run` and `list` take them (--scheduler_args: pytorch/torchx 0.7's name)
CfgOpt = Annotated[
    str | None,
    typer.Option("-cfg", "--cfg", "--scheduler_args", help="run options: k1=v1,k2=v2"),
]


# What to write instead of an option given twice, where "give it once" is not enough.
_ONCE_FIX = {
    "cfg": "give it once, the run options joined by commas: -cfg k1=v1,k2=v2",
    "scheduler": "give one scheduler",
}


class OnceOptionsCommand(typer.core.TyperCommand):
    """A command that refuses an option taking one value when it is given twice (``-cfg
    a=1 -cfg b=2``), in one line naming it, where click lets the last one win silently
    (the first ``-cfg`` would be lost without a word). pytorch/torchx 0.7 refused a repeated
    ``-s``, ``-cfg``, ``--workspace`` and ``--parent_run_id`` of ``run`` too."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.resilient_parsing:  # shell completion: complete what is there, refuse nothing
            return super().parse_args(ctx, args)
        # click's parser lists each option once per time it was given; it consumes the list
        # it parses, hence the copy
        _, _, given = self.make_parser(ctx).parse_args(args=list(args))
        seen: set[str] = set()
        for param in given:
            if not _takes_one_value(param) or param.name is None:
                continue
            if param.name in seen:
                fix = _ONCE_FIX.get(param.name, "give it once")
                raise click.UsageError(f"{'/'.join(param.opts)}: given twice; {fix}", ctx)
            seen.add(param.name)
        return super().parse_args(ctx, args)


def _takes_one_value(param: Any) -> bool:
    return (
        isinstance(param, click.Option)
        and not param.is_flag
        and not param.multiple
        and not param.count
        and param.nargs == 1
    )


def _runner() -> "Runner":
    from torchx.runner import get_runner

    return get_runner()


def _runner_of(config: "TorchxConfig") -> "Runner":
    """The runner ``get_runner()`` makes, over ``config`` already read."""
    from torchx.runner import DEFAULT_SESSION, Runner, scheduler_factories

    return Runner(DEFAULT_SESSION, scheduler_factories(), config=config)


def _scheduler(
    runner: "Runner", name: str | None, run_defaults: "Mapping[str, str] | None" = None
) -> str:
    """``name``, else ``[cli:run] scheduler`` of the config files (``run_defaults`` where
    the caller read them already), else local_cwd."""
    from torchx.schedulers import DEFAULT_SCHEDULER

    if not name and run_defaults is None:
        run_defaults = runner.config.cli_defaults("run")
    scheduler = name or (run_defaults or {}).get("scheduler") or DEFAULT_SCHEDULER
    if not runner.has_scheduler(scheduler):
        from torchx.specs import closest

        hint = closest(scheduler, runner.scheduler_backends())
        if not name:  # [cli:run] scheduler named it (the default is always known)
            raise runner.config.cli_default_error("run", "scheduler", hint)
        raise CliError(f"scheduler: got {scheduler!r}; {hint}")
    return scheduler
