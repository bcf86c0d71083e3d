"""The error for a malformed app handle, naming the handle the user most likely meant."""

from __future__ import annotations

from typing import TYPE_CHECKING

from torchx.cli._errors import CliError

if TYPE_CHECKING:
    from torchx.specs import ParsedAppHandle

# The schedulers whose ``exists`` reads a record on this machine, never a service (not
# ``torchx run``'s local schedulers: local_docker's asks dockerd, which may be remote).
RECORDED_HERE = frozenset({"local_cwd", "local_dir"})


def bad_handle(handle: str, error: Exception) -> CliError:
    """The one-line error for a malformed ``handle``: the handle it meant where one is
    found, else ``error``'s message."""
    guess = _handle_guess(handle)
    if guess:
        return CliError(f"app handle: got {handle!r}; did you mean {guess}?")
    return CliError(str(error))


def _handle_guess(text: str) -> str | None:
    """The handle a malformed one most likely meant, when that app exists: ``SCHEDULER://
    APP_ID`` lacks only the session, a bare app id names one of the default scheduler, a
    sweep id one whose record is on this machine. Only the sweep records and the local
    schedulers are asked, whose apps are recorded on this machine (one local lookup);
    remote schedulers never are, nor plug-ins, which may be remote. A local scheduler is
    the one the command's runner has: a patched factory's, where one is patched in."""
    from torchx.schedulers import DEFAULT_SCHEDULER

    scheme, sep, rest = text.strip().partition("://")
    scheduler, app_id = (scheme, rest) if sep else (DEFAULT_SCHEDULER, scheme)
    if not app_id or any(c in app_id for c in "/: "):
        return None  # not an id alone: nothing to look up
    from torchx.runner import DEFAULT_SESSION, sweep_handle_of

    sweep = sweep_handle_of(app_id)  # a sweep's record here names its handle
    if sweep is not None and (not sep or sweep.startswith(f"{scheme}://")):
        return sweep
    from torchx.specs import make_app_handle

    # the session of the handles ``torchx run`` prints: its runner's default
    return (
        make_app_handle(scheduler, DEFAULT_SESSION, app_id)
        if _recorded(scheduler, app_id)
        else None
    )


def trailing_slash(target: str, field: str) -> CliError:
    """The error for ``target``, a handle (of an app, a sweep, a trial, or ``torchx log``'s
    ``HANDLE/ROLE[/REPLICA]``) that would be right without its trailing ``/``."""
    return CliError(
        f"{field}: got {target!r}; did you mean {target.rstrip('/')}? (a handle ends without '/')"
    )


def log_target_error(handle: str, parsed: ParsedAppHandle) -> CliError:
    """The error for ``handle`` (parsed as ``parsed``) whose app id has a ``/``: no
    scheduler's app id has one (0.7's handles could not carry one), so it is ``torchx
    log``'s ``HANDLE/ROLE[/REPLICA]`` (or a stray ``/``) whatever the scheduler, and the
    handle of the app is named from the shape alone, with no lookup."""
    from torchx.specs import MalformedAppHandleException, make_app_handle

    app_id = parsed.app_id.partition("/")[0]
    if not app_id:
        # worded as any malformed handle is, with why this one is
        return CliError(f"{MalformedAppHandleException(handle)}; an app id has no '/'")
    meant = make_app_handle(parsed.scheduler_backend, parsed.session_name, app_id)
    return CliError(
        f"app handle: got {handle!r}; did you mean {meant}? (an app handle ends with the "
        "app id; HANDLE/ROLE/REPLICA is for torchx log)"
    )


def _recorded(scheduler: str, app_id: str) -> bool:
    """Whether ``app_id`` is an app of ``scheduler`` recorded on this machine (only those
    of ``RECORDED_HERE`` are asked: one local lookup, never a service)."""
    if scheduler not in RECORDED_HERE:
        return False
    from torchx.runner import DEFAULT_SESSION, scheduler_factories
    from torchx.schedulers import SchedulerError
    from torchx.specs import SpecsError

    try:
        return scheduler_factories()[scheduler](DEFAULT_SESSION).exists(app_id)
    except (KeyError, SpecsError, SchedulerError, OSError):
        return False  # not installed here, or not an app id it could hold
