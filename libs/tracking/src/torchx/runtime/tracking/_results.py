"""The values a tracker accepts, checked before anything is written.

Results are deliberately simple: flat ``field -> int | float | str``. NaN and
infinities are refused so that every stored document is strict JSON (RFC 8259),
readable by any JSON tool, not only by Python's lenient parser.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ._errors import InvalidResultError

Result = int | float | str
"""One result value."""

Results = dict[str, Result]
"""The results stored under one key: field name to value."""

MAX_STR_BYTES = 1024
"""Longest str result, in UTF-8 bytes."""

# An ASCII str is one UTF-8 byte a character, so this many always fit the limit.
_ALWAYS_FITS = MAX_STR_BYTES

# Ints are kept to about a thousand decimal digits, in the spirit of the str limit
# (and well inside Python's own limit on converting ints to text).
_MAX_INT_BITS = 3300

_HINTS: dict[type, str] = {
    bytes: "decode it to str first",
    bytearray: "decode it to str first",
    dict: "flatten it into several fields, e.g. 'l2norm/mean' and 'l2norm/sem'",
    list: "store each item as its own field, e.g. 'loss/0', 'loss/1'",
    tuple: "store each item as its own field, e.g. 'loss/0', 'loss/1'",
    type(None): "leave the field out instead",
}


def validate_results(key: str, results: object) -> Results:
    """A fresh, plain-typed copy of ``results``, or InvalidResultError naming the field."""
    if not isinstance(results, Mapping):
        raise InvalidResultError(
            key,
            None,
            f"results must be a mapping of field names to int, float or str,"
            f" got {type(results).__name__}",
        )
    checked: Results = {}
    for field, value in results.items():
        if type(field) is not str or not field:
            raise InvalidResultError(key, None, f"field names must be non-empty str, got {field!r}")
        # Plain finite floats, plain ints and short ASCII strs are the common case;
        # everything else (long or non-ASCII strs, subclasses, wrong types) takes the
        # full check. `value - value == 0.0` is false exactly for NaN and infinities.
        kind = type(value)
        if (
            (kind is float and value - value == 0.0)
            or (kind is int and value.bit_length() <= _MAX_INT_BITS)
            or (kind is str and len(value) <= _ALWAYS_FITS and value.isascii())
        ):
            checked[field] = value
        else:
            checked[field] = _check_value(key, field, value)
    return checked


def _check_value(key: str, field: str, value: object) -> Result:
    kind = type(value)
    if kind is str:
        return _check_str(key, field, value)  # type: ignore[arg-type]
    if kind is float:
        return _check_float(key, field, value)  # type: ignore[arg-type]
    # Subclasses (IntEnum, numpy.float64, ...) are stored as their plain value;
    # bool is an int subclass but not a number a reader would expect back.
    if isinstance(value, bool):
        raise InvalidResultError(
            key, field, f"bool {value!r} is not accepted; store int({value!r}) or a str"
        )
    if isinstance(value, int):
        return _check_int(key, field, int(value))
    if isinstance(value, float):
        return _check_float(key, field, float(value))
    if isinstance(value, str):
        # str.__str__ gives the text itself; str() of a str Enum member gives its name.
        return _check_str(key, field, str.__str__(value))
    hint = next((h for t, h in _HINTS.items() if isinstance(value, t)), None)
    reason = f"values must be int, float or str, got {kind.__name__}"
    raise InvalidResultError(key, field, f"{reason}; {hint}" if hint else reason)


def _check_int(key: str, field: str, value: int) -> int:
    if value.bit_length() > _MAX_INT_BITS:
        raise InvalidResultError(
            key,
            field,
            f"ints must be below 2**{_MAX_INT_BITS} in magnitude (about 990 decimal digits),"
            f" this one has {value.bit_length()} bits; store it as a str if it must be kept",
        )
    return value


def _check_float(key: str, field: str, value: float) -> float:
    if not math.isfinite(value):
        raise InvalidResultError(
            key,
            field,
            f"{value!r} is not stored (documents are strict JSON, which has no NaN or"
            " infinity); record it as a str such as 'nan' if it matters",
        )
    return value


def _check_str(key: str, field: str, value: str) -> str:
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidResultError(key, field, "str values must be encodable as UTF-8") from None
    if size > MAX_STR_BYTES:
        raise InvalidResultError(
            key,
            field,
            f"str values are at most {MAX_STR_BYTES} bytes in UTF-8, this one is {size};"
            " the tracker is for small results, store large data elsewhere and record its path",
        )
    return value
