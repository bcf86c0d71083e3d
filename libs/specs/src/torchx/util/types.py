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


_FORMAT = "expected key=value pairs, e.g. A=1,B=2; a value may hold commas: A=0,1,B=2"


def to_dict(arg: str) -> dict[str, str]:
    """``"A=1,B=x;y"`` -> ``{"A": "1", "B": "x;y"}``, the one reading of ``Dict`` component
    arguments and of ``-cfg``, as pytorch/torchx 0.7's ``to_dict``.

    A value may itself hold ``,`` or ``;`` (a list literal): the last ``,`` or ``;``
    before the next ``KEY=`` ends it (``CUDA_VISIBLE_DEVICES=0,1,LOGLEVEL=INFO``). A value
    written ``''`` or ``""``, or nothing, is empty. Where 0.7 refused a value holding ``=``
    with no ``,`` or ``;`` since the previous ``=`` (``JAVA_OPTS=-Dx=1``), that ``=`` is
    the value's. A ValueError names what is malformed: no ``=`` at all, or a pair with
    no key.
    """
    if not arg:
        return {}
    first, *segments = arg.split("=")
    key = first.strip()
    cut = _cut(key)
    if not segments or cut >= 0:
        # "a,b=1": the first pair, "a", has no '=' (0.7 took "a,b" for the key)
        pair = key[:cut] if cut >= 0 else key
        raise ValueError(f"the pair {pair!r} has no '='; {_FORMAT}")
    if not key:
        raise ValueError(f"no key before the first '='; {_FORMAT}")
    out: dict[str, str] = {}
    value: list[str] = []  # the current value's pieces, joined once it ends
    for segment in segments[:-1]:
        cut = _cut(segment)
        if cut < 0:  # no delimiter since the last '=': that '=' is part of the value
            value += (segment, "=")
            continue
        next_key = segment[cut + 1 :].strip()
        if not next_key:
            where = "".join([*value, segment])
            raise ValueError(f"no key before the '=' after {where!r}; {_FORMAT}")
        out[key] = _unquote_empty("".join([*value, segment[:cut]]).strip())
        key, value = next_key, []
    out[key] = _unquote_empty("".join([*value, segments[-1]]).strip())
    return out


def _cut(text: str) -> int:
    """Where the last pair delimiter of ``text`` is, -1 if it has none."""
    return max(text.rfind(","), text.rfind(";"))


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
