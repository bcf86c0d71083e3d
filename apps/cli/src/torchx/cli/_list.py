"""``torchx list``: the newest apps of a scheduler, filtered, with when they ran; and
``--prune``, which removes local apps' records and logs older than the retention period."""

from __future__ import annotations

import fnmatch
import itertools
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from torchx.cli._errors import CliError

if TYPE_CHECKING:
    from torchx.runner import Runner
    from torchx.schedulers import ListAppResponse

DEFAULT_LIMIT = 20
# How long local apps' records and logs are kept unless [cli:list] retention says.
DEFAULT_RETENTION = "14d"
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def list_command(
    runner: Runner,
    scheduler: str,
    cfg: dict[str, Any],
    *,
    states: str | None,
    name: str | None,
    since: str | None,
    limit: int | None,
    show_all: bool,
    json_out: bool,
) -> None:
    from torchx.cli._durations import parse_since

    opts = runner.scheduler_run_opts(scheduler)
    for key in cfg:
        if key not in opts:
            from torchx.specs import closest

            raise CliError(
                f"-cfg {key}: not a run option of {scheduler}; {closest(key, [n for n, _ in opts])}"
            )
    defaults = runner.config.cli_defaults("list")
    wanted = _states(states)
    after = parse_since("--since", since) if since else None
    count = None if show_all else (limit if limit is not None else _limit(defaults))
    apps = _filtered(runner.list_newest(scheduler, after, cfg=cfg), wanted, name)
    shown = list(itertools.islice(apps, count)) if count is not None else list(apps)
    more = count is not None and next(apps, None) is not None
    shown.reverse()  # oldest first: the newest end up next to the prompt
    if json_out:
        from torchx.cli._output import print_json

        print_json(shown)
    else:
        from torchx.cli._output import print_table

        # Which sweep (and trial) an app is, where its scheduler's answer says so; the
        # column only when one is, so a listing without trials reads as it always did.
        swept = any(a.sweep for a in shown)
        print_table(
            ["APP HANDLE", "STATE", "NAME", "STARTED", "ENDED", *(["SWEEP"] if swept else [])],
            [
                [a.app_handle, a.state.name, a.name, _time(a.started_at or a.submitted_at),
                 _time(a.ended_at), *([a.sweep or "-"] if swept else [])]
                for a in shown
            ],
        )  # fmt: skip
    if more:
        print(
            f"torchx: the {len(shown)} newest apps shown; --limit N or --all for more",
            file=sys.stderr,
        )


def prune_command(runner: Runner, scheduler: str, older_than: str | None, json_out: bool) -> None:
    from torchx.cli._durations import parse_duration

    defaults = runner.config.cli_defaults("list")
    field = "--older-than" if older_than else "[cli:list] retention"
    text = older_than or defaults.get("retention") or DEFAULT_RETENTION
    cutoff = datetime.now() - timedelta(seconds=parse_duration(field, text))
    removed = runner.prune(scheduler, cutoff)
    if json_out:
        from torchx.cli._output import print_json

        print_json({"removed": removed, "ended_before": cutoff.isoformat(timespec="seconds")})
        return
    for handle in removed:
        print(handle)
    print(
        f"torchx: removed {len(removed)} app(s) that ended more than {text} ago "
        f"(before {cutoff.strftime(_TIME_FORMAT)}); running apps are kept",
        file=sys.stderr,
    )


def _filtered(
    apps: Iterator[ListAppResponse], states: set[str] | None, name: str | None
) -> Iterator[ListAppResponse]:
    pattern = None
    if name is not None:
        pattern = name if any(c in name for c in "*?[") else f"*{name}*"
    for app in apps:
        if states is not None and app.state.name not in states:
            continue
        if pattern is not None and not fnmatch.fnmatchcase(app.name or app.app_id, pattern):
            continue
        yield app


def _states(text: str | None) -> set[str] | None:
    if text is None:
        return None
    from torchx.specs import AppState

    names = {s.strip().upper() for s in text.split(",") if s.strip()}
    unknown = sorted(names - set(AppState.__members__))
    if unknown or not names:
        raise CliError(
            f"--state: got {text!r}; expected one or more of "
            f"{', '.join(AppState.__members__)} (comma separated)"
        )
    return names


def _limit(defaults: dict[str, str]) -> int:
    text = defaults.get("limit")
    if text is None:
        return DEFAULT_LIMIT
    if not text.strip().isdigit() or int(text) < 1:
        raise CliError(f"[cli:list] limit: got {text!r}; expected a whole number above 0")
    return int(text)


def _time(value: datetime | None) -> str:
    return value.strftime(_TIME_FORMAT) if value is not None else "-"
