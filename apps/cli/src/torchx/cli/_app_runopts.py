"""The commands about the schedulers' run options: ``runopts`` shows them and
``configure`` writes them into a ``.torchxconfig``.
"""

# No ``from __future__ import annotations``, as in ``_app``: typer reads each command's
# signature on every start, and string annotations would be evaluated each time.

from typing import TYPE_CHECKING, Annotated, Any

import typer

from torchx.cli._app_common import JsonOpt, _complete_scheduler, _runner, _scheduler
from torchx.cli._errors import CliError
from torchx.cli._handled import handled

if TYPE_CHECKING:
    from torchx.runner import Runner


def _all_run_opts(runner: "Runner") -> dict[str, Any]:
    """Every scheduler's run options. A scheduler plug-in that cannot be loaded is left
    out with a warning naming it, so one broken package does not hide the others."""
    from torchx.cli._errors import one_line

    out: dict[str, Any] = {}
    for name in runner.scheduler_backends():
        try:
            out[name] = runner.scheduler_run_opts(name)
        except Exception as e:
            typer.echo(f"torchx: warning: scheduler {name!r} is left out: {one_line(e)}", err=True)
    return out


@handled
def runopts(
    scheduler: Annotated[
        str | None,
        typer.Argument(
            help="one scheduler (default: all)",
            show_default=False,
            autocompletion=_complete_scheduler,
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Show the run options (-cfg) each scheduler accepts."""
    runner = _runner()
    if scheduler:
        name = _scheduler(runner, scheduler)
        opts = {name: runner.scheduler_run_opts(name)}
    else:
        opts = _all_run_opts(runner)
    if json_out:
        from torchx.cli._output import print_json

        print_json(
            {
                name: {
                    k: {
                        "type": o.opt_type.__name__,
                        "default": o.default,
                        "required": o.is_required,
                        "help": o.help,
                    }
                    for k, o in ro
                }
                for name, ro in opts.items()
            }
        )
        return
    for name, ro in opts.items():
        typer.echo(f"{name}:")
        text = str(ro).rstrip()
        typer.echo("\n".join("  " + ln for ln in text.splitlines()) if text else "  (none)")


@handled
def configure(
    schedulers: Annotated[
        str | None,
        typer.Option(
            "-s",
            "--schedulers",
            "--scheduler",
            help="the schedulers to write, comma separated (default: all)",
            autocompletion=_complete_scheduler,
        ),
    ] = None,
    print_only: Annotated[
        bool, typer.Option("--print", help="print the file instead of writing it")
    ] = False,
    all_opts: Annotated[
        bool,
        typer.Option("-a", "--all", help="write every option, not only the required ones"),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="overwrite an existing file")] = False,
) -> None:
    """Write a .torchxconfig in the current directory with the schedulers' options."""
    from torchx.cli._config import config_path, render

    runner = _runner()
    wanted = [n.strip() for n in (schedulers or "").split(",") if n.strip()]
    # Without a list: every scheduler whose options can be read (a broken plug-in is named
    # in a warning and left out).
    names = [_scheduler(runner, n) for n in wanted] if wanted else list(_all_run_opts(runner))
    text = render(names, all_opts)
    if print_only:
        typer.echo(text, nl=False)
        return
    path = config_path()
    if path.exists() and not force:
        raise CliError(f"configure: {path} already exists; pass --force to overwrite it")
    path.write_text(text)
    typer.echo(f"wrote {path}")
