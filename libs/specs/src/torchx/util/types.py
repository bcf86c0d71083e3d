"""Decoding of component arguments from their command-line text, as pytorch/torchx's
``torchx.util.types`` offers it to component tooling.

``List[T]`` arguments are written ``a,b,c``; ``Dict[K, V]`` arguments ``k1=v1,k2=v2``;
``bool`` arguments ``true``/``false``.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")
_PRIMITIVES = (int, str, float)


def to_list(arg: str) -> list[str]:
    """``"a, b,c"`` -> ``["a", "b", "c"]``; an empty or blank string is an empty list."""
    if not arg.strip():
        return []
    return [item.strip() for item in arg.split(",")]


def to_dict(arg: str) -> dict[str, str]:
    """``"A=1,B=x;y"`` -> ``{"A": "1", "B": "x;y"}``.

    A value may itself hold ``,`` or ``;`` (a list literal): the last ``,`` or ``;``
    before the next ``=`` ends it. A value written ``''`` or ``""`` is empty.
    """
    if not arg:
        return {}
    pieces = [p.strip() for p in arg.split("=") if p.strip()]
    if len(pieces) < 2:
        raise ValueError(f"{arg!r} has no key=value pair; write KEY=VALUE[,KEY2=VALUE2]")
    out: dict[str, str] = {}
    key = pieces[0]
    for middle in pieces[1:-1]:
        cut = max(middle.rfind(","), middle.rfind(";"))
        if cut <= 0 or cut == len(middle) - 1:
            raise ValueError(
                f"{middle!r} in {arg!r} is not VALUE,NEXT_KEY; separate pairs with , or ;"
            )
        out[key] = _unquote_empty(middle[:cut].strip())
        key = middle[cut + 1 :].strip()
    out[key] = _unquote_empty(pieces[-1])
    return out


def _unquote_empty(value: str) -> str:
    return "" if value in ("''", '""') else value


def is_bool(param_type: Any) -> bool:
    return param_type is bool


def is_primitive(param_type: Any) -> bool:
    """Whether ``param_type`` is int, str or float (bool is handled on its own)."""
    return param_type in _PRIMITIVES


def decode_optional(param_type: Any) -> Any:
    """``T`` for ``Optional[T]`` (or ``T | None``), else ``param_type`` unchanged."""
    if typing.get_origin(param_type) not in (typing.Union, types.UnionType):
        return param_type
    members = [a for a in typing.get_args(param_type) if a is not type(None)]
    return members[0] if len(members) == 1 else param_type


def decode_from_string(encoded_value: str, annotation: Any) -> dict[Any, Any] | list[Any] | None:
    """A ``List[T]`` or ``Dict[K, V]`` value from its text; None for an empty text."""
    if not encoded_value:
        return None
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is dict:
        key_type, value_type = args
        return {key_type(k): value_type(v) for k, v in to_dict(encoded_value).items()}
    if origin is list:
        (item_type,) = args
        if not is_primitive(item_type):
            raise ValueError(f"list items must be int, str or float, not {item_type}")
        return [item_type(v) for v in to_list(encoded_value)]
    raise ValueError(f"cannot decode {encoded_value!r} as {annotation}: use a List or a Dict")


def decode(encoded_value: Any, annotation: Any) -> Any:
    """The typed value of a component argument given as text (other values pass through)."""
    if encoded_value is None:
        return None
    if is_bool(annotation):
        return bool(encoded_value) and str(encoded_value).lower() == "true"
    if not is_primitive(annotation) and isinstance(encoded_value, str):
        return decode_from_string(encoded_value, annotation)
    return encoded_value


def get_argparse_param_type(parameter: inspect.Parameter) -> Callable[[str], object]:
    """The ``type=`` for argparse: the annotation if primitive, else str (decoded later)."""
    annotation = parameter.annotation
    return annotation if is_primitive(annotation) else str


def none_throws(optional: _T | None, message: str = "Unexpected `None`") -> _T:
    """``optional`` itself; an AssertionError with ``message`` if it is None."""
    if optional is None:
        raise AssertionError(message)
    return optional


__all__ = [
    "decode",
    "decode_from_string",
    "decode_optional",
    "get_argparse_param_type",
    "is_bool",
    "is_primitive",
    "none_throws",
    "to_dict",
    "to_list",
]
