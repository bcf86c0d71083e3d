"""Events: one :class:`TorchxEvent` per call of the runner's API, sent to Python logging.

The runner records each call (``schedule``, ``status``, ``cancel``, ...) with
:class:`log_event`. Events go to the logger ``torchx.runner.events``, which does not pass
them on to the root logger; add a handler to it to receive them (``record.msg`` is the
event's JSON line)::

    import logging
    logging.getLogger("torchx.runner.events").addHandler(my_handler)

``record(event, "console")`` also writes it to stderr.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TYPE_CHECKING

from torchx.runner.events.api import SourceType, TorchxEvent
from torchx.runner.events.handlers import get_logging_handler

if TYPE_CHECKING:
    import logging

LOGGER_NAME = "torchx.runner.events"


def _logger(destination: str) -> logging.Logger:
    import logging

    logger = logging.getLogger(LOGGER_NAME)
    if logger.propagate:
        # An event is handled once, by the handlers put here, not again by the root logger's.
        logger.propagate = False
        logger.setLevel(logging.INFO)
    handler = get_logging_handler(destination)
    if handler not in logger.handlers:
        logger.addHandler(handler)
    return logger


def record(event: TorchxEvent, destination: str = "null") -> None:
    """Send ``event`` (as its JSON line) to the events logger and ``destination``."""
    if destination == "null" and "logging" not in sys.modules:
        # No handler can have been added to the events logger before logging was imported,
        # so nobody listens: the CLI's commands do not pay for importing logging.
        return
    _logger(destination).info(event.serialize())


class log_event:
    """Records one API call as a :class:`TorchxEvent` when its ``with`` block ends,
    with the CPU and wall time it took and, if it raised, the traceback (the exception
    still propagates)::

        with log_event("schedule", "local_cwd", app_id) as ev:
            ...
            ev.event.app_id = app_id  # fields may be filled in inside the block
    """

    def __init__(
        self,
        api: str,
        scheduler: str | None = None,
        app_id: str | None = None,
        app_image: str | None = None,
        runcfg: str | None = None,
        workspace: str | None = None,
        session: str | None = None,
        destination: str = "null",
    ) -> None:
        self.event = TorchxEvent(
            session=session or app_id or "",
            scheduler=scheduler or "",
            api=api,
            app_id=app_id,
            app_image=app_image,
            runcfg=runcfg,
            workspace=workspace,
        )
        self.destination = destination
        self._cpu_ns = 0
        self._wall_ns = 0

    def __enter__(self) -> log_event:
        self._cpu_ns = time.process_time_ns()
        self._wall_ns = time.perf_counter_ns()
        self.event.start_epoch_time_usec = time.time_ns() // 1000
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.event.cpu_time_usec = (time.process_time_ns() - self._cpu_ns) // 1000
        self.event.wall_time_usec = (time.perf_counter_ns() - self._wall_ns) // 1000
        if exc is not None:
            import traceback

            self.event.raw_exception = "".join(traceback.format_exception(exc_type, exc, tb))
        record(self.event, self.destination)


__all__ = [
    "LOGGER_NAME",
    "SourceType",
    "TorchxEvent",
    "get_logging_handler",
    "log_event",
    "record",
]
