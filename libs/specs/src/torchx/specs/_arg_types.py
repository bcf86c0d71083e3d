"""Types a component parameter may have on the command line, and reading a value of one."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Union

from torchx.specs._errors import SpecsError
from torchx.specs._runopts import BOOL_WORDS
from torchx.util.types import to_dict

_SCALARS: dict[type, str] = {str: "str", int: "int", float: "float", bool: "bool"}


@dataclass(frozen=True)
class ArgType:
    """A normalized parameter type: a scalar, a list of scalars or a str-keyed dict."""

    kind: str  # "scalar" | "list" | "dict" | "python"
    item: type  # the scalar, or the element/value type for list and dict
    optional: bool = False

    def describe(self) -> str:
        if self.kind == "python":
            return "set from Python only (its type has no command-line form)"
        base = _SCALARS[self.item]
        if self.kind == "list":
            base = f"list[{base}] (a,b,c)"
        elif self.kind == "dict":
            # the last comma before the next KEY= ends a value (CUDA_VISIBLE_DEVICES=0,1)
            base = f"dict[str, {_SCALARS[self.item]}] (k1=v1,k2=v2; a value may hold commas)"
        return base + (" or None" if self.optional else "")


def _arg_type(annotation: Any) -> ArgType | None:
    """Normalize an annotation, or None when the CLI cannot express it."""
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            return None
        optional = True
        annotation = members[0]
        origin = typing.get_origin(annotation)
    if annotation in _SCALARS:
        return ArgType("scalar", annotation, optional)
    args = typing.get_args(annotation)
    if origin in (list, typing.List, Sequence) and len(args) == 1 and args[0] in _SCALARS:  # noqa: UP006
        return ArgType("list", args[0], optional)
    if origin in (dict, typing.Dict) and len(args) == 2 and args[0] is str and args[1] in _SCALARS:  # noqa: UP006
        return ArgType("dict", args[1], optional)
    return None


def _convert_scalar(text: str, item: type, where: str) -> Any:
    if item is str:
        return text
    if item is bool:
        word = BOOL_WORDS.get(text.strip().lower())
        if word is None:
            raise SpecsError(where, text, "expected a bool: true or false")
        return word
    try:
        return item(text)
    except ValueError:
        raise SpecsError(where, text, f"expected {_SCALARS[item]}") from None


# A parameter whose type the command line cannot express (``dict[str, list[str]]``), kept
# at its default unless a Python caller passes a value, as 0.7 allowed.
PYTHON_ONLY = ArgType("python", object)


def read_pairs(text: str, where: str) -> dict[str, str]:
    """``k1=v1,k2=v2`` as raw strings, read as pytorch/torchx 0.7 read both a ``Dict``
    component argument and ``-cfg``: by ``torchx.util.types.to_dict`` (a value may hold
    commas, ``CUDA_VISIBLE_DEVICES=0,1``). Malformed text is a SpecsError naming ``where``."""
    try:
        return to_dict(text)
    except ValueError as e:
        raise SpecsError(where, text, str(e)) from None


def convert_arg(text: str, t: ArgType, where: str) -> Any:
    """``text`` read as a value of type ``t``; ``where`` names it in the error."""
    if t.kind == "python":
        raise SpecsError(
            where,
            text,
            "its type has no command-line form; leave it at its default, or call the "
            "component from Python with the value",
        )
    if t.optional and text.strip().lower() in ("none", "null"):
        return None
    if t.kind == "scalar":
        return _convert_scalar(text, t.item, where)
    if t.kind == "list":
        return [_convert_scalar(v, t.item, where) for v in text.split(",") if v != ""]
    pairs = read_pairs(text, where)
    # the key in the field: "got '1x'" alone does not say which pair holds it
    return {k: _convert_scalar(v, t.item, f"{where} (key {k!r})") for k, v in pairs.items()}
