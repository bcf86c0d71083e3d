"""Where recorded events go: a ``logging.Handler`` per destination name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from torchx.specs import SpecsError, closest

if TYPE_CHECKING:
    import logging

# Built on first use; each destination keeps one handler for the life of the process.
_HANDLERS: dict[str, logging.Handler] = {}
DESTINATIONS = ("null", "console")


def get_logging_handler(destination: str = "null") -> logging.Handler:
    """The handler for ``destination``: ``null`` drops events (the default), ``console``
    writes each as a JSON line to stderr."""
    import logging

    handler = _HANDLERS.get(destination)
    if handler is None:
        if destination == "null":
            handler = logging.NullHandler()
        elif destination == "console":
            handler = logging.StreamHandler()
        else:
            raise SpecsError("events destination", destination, closest(destination, DESTINATIONS))
        _HANDLERS[destination] = handler
    return handler


__all__ = ["DESTINATIONS", "get_logging_handler"]
