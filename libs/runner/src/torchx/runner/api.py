"""pytorch/torchx's ``torchx.runner.api``: the Runner and ``get_runner``, defined in
``torchx.runner``, with the tracking variable names and the event recorder it uses.

``get_runner`` reads ``get_scheduler_factories`` from this module when it runs, so code
that patches it here (as 0.7's tests do) changes which schedulers a new Runner sees."""

from torchx.runner._config import get_configured_trackers
from torchx.runner._runner import Runner, get_runner
from torchx.runner._tracking import (
    ENV_TORCHX_JOB_ID,
    ENV_TORCHX_PARENT_RUN_ID,
    ENV_TORCHX_TRACKERS,
)
from torchx.runner.events import log_event
from torchx.schedulers import get_scheduler_factories
from torchx.specs import NONE

__all__ = [
    "ENV_TORCHX_JOB_ID",
    "ENV_TORCHX_PARENT_RUN_ID",
    "ENV_TORCHX_TRACKERS",
    "NONE",
    "Runner",
    "get_configured_trackers",
    "get_runner",
    "get_scheduler_factories",
    "log_event",
]
