"""The installed torchx version: ``from torchx.version import __version__``.

pytorch/torchx offers it as ``torchx.__version__`` too; here ``torchx`` is a namespace
package shared by several distributions and has no attributes of its own, so this module
is where the version lives.
"""

from importlib.metadata import version as _version

from torchx.components import IMAGE as _IMAGE

__version__: str = _version("torchx")

# The image the builtin components run in by default (pytorch/torchx 0.7's published one).
TORCHX_IMAGE: str = _IMAGE

__all__ = ["TORCHX_IMAGE", "__version__"]
