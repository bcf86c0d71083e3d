"""The error raised for an app that cannot become a kfp stage as it stands."""

from __future__ import annotations

from torchx.specs import SpecsError


class KfpAdapterError(SpecsError):
    """An app, or part of one, that a kfp v2 stage cannot run faithfully.

    Like every torchx spec error it names the field, the value given and what would be
    accepted instead; it is a ``ValueError`` too.
    """
