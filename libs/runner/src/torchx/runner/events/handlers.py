"""Where recorded events go: a ``logging.Handler`` per destination name."""

from __future__ import annotations

import logging

from torchx.specs import SpecsError, closest

# Built on first use; each destination keeps one handler for the life of the process.
_HANDLERS: dict[str, logging.Handler] = {}
DESTINATIONS = ("null", "console")


def get_logging_handler(destination: str = "null") -> logging.Handler:
    """The handler for ``destination``: ``null`` drops events (the default), ``console``
    writes each as a JSON line to stderr."""
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
