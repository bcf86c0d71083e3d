"""A cheaper ``nn.Module.__init__`` for the layer objects themselves.

A model of a dozen layers makes a dozen extra module objects (the layers, next to
the torch modules they build), and ``nn.Module.__init__`` sets its seventeen
attributes one ``super().__setattr__`` call at a time. Here the same attributes are
set in one go. The state is learnt from a real ``nn.Module()`` when this module is
imported, and used only if it is made of the empty containers and constants it is
made of today and ``nn.Module.__init__`` has not been replaced since; otherwise
``nn.Module.__init__`` runs as usual.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

_MODULE_INIT = nn.Module.__init__
_CONTAINERS: tuple[type, ...] = (dict, set, OrderedDict)


def _learn_state() -> list[tuple[str, Callable[[], Any] | None, Any]] | None:
    """(name, factory or None, constant) for each attribute a fresh nn.Module has."""
    entries: list[tuple[str, Callable[[], Any] | None, Any]] = []
    for key, value in nn.Module().__dict__.items():
        if value is None or isinstance(value, bool):
            entries.append((key, None, value))
        elif type(value) in _CONTAINERS and not value:
            entries.append((key, type(value), None))
        else:
            return None
    return entries


_STATE = _learn_state()
_log_usage = getattr(torch._C, "_log_api_usage_once", None)


def init_module(module: nn.Module) -> None:
    """What ``nn.Module.__init__(module)`` does, in fewer steps."""
    if _STATE is None or nn.Module.__init__ is not _MODULE_INIT or module.call_super_init:
        nn.Module.__init__(module)
        return
    if _log_usage is not None:
        _log_usage("python.nn_module")
    state = module.__dict__
    for key, factory, constant in _STATE:
        state[key] = constant if factory is None else factory()
