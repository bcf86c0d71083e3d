"""A cheaper ``nn.Module.__init__`` for the layer objects themselves.

A model of a dozen layers makes a dozen extra module objects (the layers, next to
the torch modules they build), and ``nn.Module.__init__`` sets its seventeen
attributes one ``super().__setattr__`` call at a time. Here the same state is made
as one dict literal, which Python builds at its final size in one step, together
with the layer's own attributes. The result is compared with a real ``nn.Module()``
when this module is imported (same names in the same order, same types, same
values) and used only if it matches and ``nn.Module.__init__`` has not been replaced
since; otherwise ``nn.Module.__init__`` runs as usual.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch
from torch import nn

_MODULE_INIT = nn.Module.__init__
# Copying an empty OrderedDict makes a fresh empty one in half the time of calling
# OrderedDict() (which goes through OrderedDict.__init__ and its update); this one is
# never handed out or changed.
_EMPTY_ORDERED: OrderedDict[Any, Any] = OrderedDict()
_copy_ordered = OrderedDict.copy
_log_usage = getattr(torch._C, "_log_api_usage_once", None)
_set_dict = object.__setattr__
#: whether the literal below is what nn.Module.__init__ makes (checked at import)
_FAST = True


def init_module(module: nn.Module, attrs: dict[str, Any]) -> None:
    """``nn.Module.__init__(module)``, then ``module.__dict__.update(attrs)``, in fewer steps."""
    if not _FAST or nn.Module.__init__ is not _MODULE_INIT or module.call_super_init:
        nn.Module.__init__(module)
        module.__dict__.update(attrs)
        return
    if _log_usage is not None:
        _log_usage("python.nn_module")
    new, empty = _copy_ordered, _EMPTY_ORDERED
    state = {
        "training": True,
        "_parameters": {},
        "_buffers": {},
        "_non_persistent_buffers_set": set(),
        "_backward_pre_hooks": new(empty),
        "_backward_hooks": new(empty),
        "_is_full_backward_hook": None,
        "_forward_hooks": new(empty),
        "_forward_hooks_with_kwargs": new(empty),
        "_forward_hooks_always_called": new(empty),
        "_forward_pre_hooks": new(empty),
        "_forward_pre_hooks_with_kwargs": new(empty),
        "_state_dict_hooks": new(empty),
        "_state_dict_pre_hooks": new(empty),
        "_load_state_dict_pre_hooks": new(empty),
        "_load_state_dict_post_hooks": new(empty),
        "_modules": {},
        **attrs,
    }
    current = module.__dict__
    if current:
        # set before __init__ (by a subclass): nn.Module.__init__ would keep such
        # attributes and overwrite only its own
        current.update(state)
    else:
        _set_dict(module, "__dict__", state)


def _same_as_torch() -> bool:
    ours = nn.Module.__new__(nn.Module)
    init_module(ours, {})
    mine, theirs = ours.__dict__, nn.Module().__dict__
    return list(mine) == list(theirs) and all(
        type(mine[key]) is type(value) and mine[key] == value and mine[key] is not _EMPTY_ORDERED
        for key, value in theirs.items()
    )


_FAST = _same_as_torch()
