"""Checking what apps record: JSON values only, so every backend can store and show them."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ._errors import InvalidRecordError

_FIX = "use str, int, float, bool, None, lists and str-keyed dicts of them"


def json_value(field: str, value: object) -> object:
    """``value`` as plain JSON data (tuples become lists), or InvalidRecordError."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidRecordError(field, value, "NaN and infinities are not JSON; store a str")
        return value
    if isinstance(value, (list, tuple)):
        return [json_value(f"{field}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise InvalidRecordError(f"{field} key", key, "dict keys must be str")
            out[key] = json_value(f"{field}[{key!r}]", v)
        return out
    raise InvalidRecordError(field, value, f"{type(value).__name__} is not JSON data; {_FIX}")


def json_mapping(field: str, values: Mapping[str, object]) -> dict[str, object]:
    return {key: json_value(f"{field}[{key!r}]", v) for key, v in values.items()}


def text(field: str, value: object, *, optional: bool = False) -> str | None:
    """A non-empty str (or None when ``optional``), or InvalidRecordError."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidRecordError(field, value, "give a non-empty str")
    return value
