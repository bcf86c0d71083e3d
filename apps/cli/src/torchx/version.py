"""The installed torchx version: ``from torchx.version import __version__``.

pytorch/torchx offers it as ``torchx.__version__`` too; here ``torchx`` is a namespace
package shared by several distributions and has no attributes of its own, so this module
is where the version lives.
"""

from importlib.metadata import version as _version

__version__: str = _version("torchx")
# The image that components default to; computed on first use (see __getattr__ below).
TORCHX_IMAGE: str


def __getattr__(name: str) -> str:
    # TORCHX_IMAGE is computed on first use: it reads entry points, which costs start-up time.
    if name != "TORCHX_IMAGE":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from torchx.components import IMAGE
    from torchx.util.entrypoints import load

    # A package may name the image through entry point torchx.version:get_torchx_image, a
    # function of the version (as in pytorch/torchx); otherwise the builtin components' image.
    image: str = load("torchx.version", "get_torchx_image", default=lambda _version: IMAGE)(
        __version__
    )
    globals()[name] = image
    return image


__all__ = ["TORCHX_IMAGE", "__version__"]
