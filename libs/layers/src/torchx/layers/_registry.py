"""What the layer classes and the spec reader both need: the spec format and the layer types.

Kept apart from both so that ``_layer`` (which writes specs) and ``_spec`` (which
reads them into layers) import this module and not each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._layer import Layer

SPEC_FORMAT_VERSION = 1

#: Every public Layer subclass by class name, for ``from_spec``; filled as classes are made.
LAYER_TYPES: dict[str, type[Layer]] = {}
