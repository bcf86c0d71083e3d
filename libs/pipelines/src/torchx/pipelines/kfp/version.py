"""The version of the kfp adapter, as 0.7's ``torchx.pipelines.kfp.version`` gave it: the
installed torchx-pipelines version."""

from importlib.metadata import version as _version

__version__: str = _version("torchx-pipelines")

__all__ = ["__version__"]
