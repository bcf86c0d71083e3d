"""kfp is imported here, on first use, so that importing the adapter stays cheap."""

from __future__ import annotations

import importlib
from types import ModuleType


def kfp_dsl() -> ModuleType:
    try:
        return importlib.import_module("kfp.dsl")
    except ImportError as e:  # a broken install: kfp is a hard dependency
        raise ImportError(
            f"torchx.pipelines.kfp needs kfp 2.x ({e}); reinstall torchx-pipelines"
        ) from e


def kfp_kubernetes() -> ModuleType | None:
    """The kfp-kubernetes extension, or None when it is not installed."""
    try:
        return importlib.import_module("kfp.kubernetes")
    except ImportError:
        return None


def in_pipeline() -> bool:
    """Whether a ``@dsl.pipeline`` function is being defined right now."""
    context = importlib.import_module("kfp.dsl.pipeline_context")
    return context.Pipeline.get_default_pipeline() is not None
