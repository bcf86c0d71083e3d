"""What the ``torchx`` commands share: the runner they use, how they choose a scheduler,
shell completion of scheduler names and the options several commands take.

Like every command module, it imports nothing heavy at module level.
"""

# No ``from __future__ import annotations``, as in ``_app``: typer reads each command's
# signature on every start, and string annotations would be evaluated each time.

from typing import TYPE_CHECKING, Annotated

import typer

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
