"""Importing a module, or an attribute of one, from a ``module.path:attr`` string."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def load_module(path: str) -> ModuleType | Any | None:
    """``pkg.mod:fn`` -> ``pkg.mod.fn``; ``pkg.mod`` -> the module.

    None when the module cannot be imported or has no such attribute (pytorch/torchx's
    contract: callers test the result rather than catch).
    """
    module_path, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_path)
        obj: Any = module
        for part in attr.split(".") if attr else []:
            obj = getattr(obj, part)
        return obj
    except (ImportError, AttributeError, ValueError):
        return None


__all__ = ["load_module"]
