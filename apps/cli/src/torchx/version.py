"""The installed torchx version: ``from torchx.version import __version__``.

pytorch/torchx offers it as ``torchx.__version__`` too; here ``torchx`` is a namespace
package shared by several distributions and has no attributes of its own, so this module
is where the version lives.
"""

from importlib.metadata import version as _version

__version__: str = _version("torchx")

__all__ = ["__version__"]
