"""The on-store format: one small JSON object per key, e.g. ``{"accuracy": 0.233}``.

Plain JSON keeps documents readable by people and by any other tool; reading is
strict so that a damaged or foreign document is reported with its path instead of
surfacing as a JSON traceback or as values of unexpected types.
"""

from __future__ import annotations

import json

from ._errors import CorruptResultError
from ._results import Results

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


def decode_document(data: bytes, path: str) -> Results:
    """Parse a stored document, or raise CorruptResultError naming ``path``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CorruptResultError(
            path, f"not UTF-8 text ({err.reason} at byte {err.start})"
        ) from None
    try:
        document = _DECODER.decode(text)
    except json.JSONDecodeError as err:
        reason = "empty file" if not text.strip() else f"not valid JSON ({err})"
        raise CorruptResultError(path, reason) from None
    except _NonStandardConstant as err:
        raise CorruptResultError(path, f"holds {err}, which strict JSON does not allow") from None
    except RecursionError:
        raise CorruptResultError(path, "nested too deeply to be a document of results") from None
    except ValueError as err:
        # e.g. an int with more digits than Python converts (sys.get_int_max_str_digits)
        raise CorruptResultError(path, f"not a readable document ({err})") from None
    if type(document) is not dict:
        raise CorruptResultError(
            path, f"expected a JSON object of results, found {_describe(document)}"
        )
    for field, value in document.items():
        if type(value) not in (int, float, str):
            raise CorruptResultError(
                path,
                f"field {field!r} holds {_describe(value)}; results are numbers and strings",
            )
    return document


def _describe(value: object) -> str:
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
