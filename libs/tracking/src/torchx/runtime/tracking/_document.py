"""The on-store format: one small JSON object per key, e.g. ``{"accuracy": 0.233}``.

Plain JSON keeps documents readable by people and by any other tool; reading is
strict so that a damaged or foreign document is reported with its path instead of
surfacing as a JSON traceback or as values of unexpected types.
"""

from __future__ import annotations

import json

from ._errors import CorruptResultError
from ._results import Results

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
"""Largest document a put writes and a get reads, in bytes: reading a key never holds
more than this, whatever file sits at its path."""

_JSON_TYPE_NAMES: dict[type, str] = {
    dict: "an object",
    list: "an array",
    bool: "a boolean",
    type(None): "null",
    str: "a string",
    int: "a number",
    float: "a number",
}


class _NonStandardConstant(ValueError):
    pass


def _reject_constant(name: str) -> object:
    raise _NonStandardConstant(name)


# Built once: json.dumps/json.loads with any option build a new coder on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def encode_document(results: Results) -> bytes:
    """Serialize already validated results."""
    return _ENCODER.encode(results).encode("utf-8")


def decode_object(data: bytes, what: str) -> dict[str, Any]:
    """``data`` as one strict JSON object, or a ValueError whose message says why it is
    not ``what`` ("a JSON object of results"). Both trackers read their files with it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    try:
        document = _DECODER.decode(text)
    except json.JSONDecodeError as err:
        raise ValueError("empty file" if not text.strip() else f"not valid JSON ({err})") from None
    except _NonStandardConstant as err:
        raise ValueError(f"holds {err}, which strict JSON does not allow") from None
    except RecursionError:
        raise ValueError(f"nested too deeply to be {what}") from None
    except ValueError as err:
        # e.g. an int with more digits than Python converts (sys.get_int_max_str_digits)
        raise ValueError(f"not a readable document ({err})") from None
    if type(document) is not dict:
        raise ValueError(f"expected {what}, found {_describe(document)}")
    return document


def decode_document(data: bytes, path: str) -> Results:
    """Parse a stored document, or raise CorruptResultError naming ``path``."""
    try:
        document = decode_object(data, "a JSON object of results")
    except ValueError as err:
        raise CorruptResultError(path, str(err)) from None
    for field, value in document.items():
        if type(value) not in (int, float, str):
            raise CorruptResultError(
                path,
                f"field {field!r} holds {_describe(value)}; results are numbers and strings",
            )
    return document


def _describe(value: object) -> str:
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
