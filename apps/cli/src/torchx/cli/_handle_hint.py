"""The error for a malformed app handle, naming the handle the user most likely meant."""

from __future__ import annotations

from torchx.cli._errors import CliError

# The session of the handles ``torchx run`` prints (``get_runner()``'s default name).
CLI_SESSION = "torchx"


def bad_handle(handle: str, error: Exception) -> CliError:
    """The one-line error for a malformed ``handle``: the handle it meant where one is
    found, else ``error``'s message."""
    guess = _handle_guess(handle)
    if guess:
        return CliError(f"app handle: got {handle!r}; did you mean {guess}?")
    return CliError(str(error))


def _handle_guess(text: str) -> str | None:
    """The handle a malformed one most likely meant: ``SCHEDULER://APP_ID`` lacks only the
    session; a bare sweep id is looked up in the sweep records of this machine, a bare app
    id on the default scheduler, whose apps are on this machine (one local lookup; remote
    schedulers are never asked)."""
    from torchx.specs import make_app_handle

    scheme, sep, rest = text.strip().partition("://")
    if sep:
        session_left_out = scheme and rest and "/" not in rest
        return make_app_handle(scheme, CLI_SESSION, rest) if session_left_out else None
    app_id = scheme
    if not app_id or any(c in app_id for c in "/: "):
        return None
    from torchx.runner import sweep_handle_of

    sweep = sweep_handle_of(app_id)  # a sweep's record on this machine names its handle
    if sweep is not None:
        return sweep
    from torchx.schedulers import DEFAULT_SCHEDULER, SchedulerError, get_scheduler_factories
    from torchx.specs import SpecsError

    try:
        scheduler = get_scheduler_factories()[DEFAULT_SCHEDULER](CLI_SESSION)
        known = scheduler.exists(app_id)
    except (SpecsError, SchedulerError, OSError):
        return None  # not an app id the default scheduler could hold
    return make_app_handle(DEFAULT_SCHEDULER, CLI_SESSION, app_id) if known else None
