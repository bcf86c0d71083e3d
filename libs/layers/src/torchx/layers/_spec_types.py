"""Strict types for the arguments a layer spec gives: ``"false"`` is not a boolean.

torch takes any truthy value where it wants a bool, so ``{"bias": "false"}`` would
build a Linear *with* a bias. A spec's config values are checked here, against the
annotations of the layer's (or its torch class's) constructor, before the layer is
made: a string, a float or a boolean given where another kind is expected is refused
with the field, the value and what to write instead.
"""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from typing import Any

from ._errors import SpecError

#: The kinds of JSON/YAML value a config field accepts; None where it is not checked
#: (an annotation such as nn.Module or Callable that plain data does not describe).
Kinds = frozenset[type]

_SEQUENCES = (tuple, list, collections.abc.Sequence)
_WORDS = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    type(None): "null",
    list: "a list",
}


def _kinds(tp: Any) -> Kinds | None:
    """The value kinds an annotation admits, or None where it cannot be told."""
    if tp is bool or tp is int or tp is str or tp is type(None) or tp is None:
        return frozenset({type(None) if tp is None else tp})
    if tp is float:  # JSON and YAML write 1.0 as 1, and torch takes an int there
        return frozenset({float, int})
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return frozenset(type(v) for v in typing.get_args(tp))
    if origin is typing.Union or origin is types.UnionType:
        found: set[type] = set()
        for arg in typing.get_args(tp):
            kinds = _kinds(arg)
            if kinds is None:
                return None
            found |= kinds
        return frozenset(found)
    if origin in _SEQUENCES or tp in _SEQUENCES:
        return frozenset({list, tuple})
    return None


def _hints(function: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function)
    except Exception:  # a name only imported for type checking: no hints
        return {}


def _field_kinds(cls: type) -> dict[str, Kinds]:
    """Each checkable constructor argument of a layer class, with the kinds it takes."""
    from ._torch_layer import TorchLayer

    init = cls.__dict__.get("__init__") or next(
        c.__dict__["__init__"] for c in cls.__mro__ if "__init__" in c.__dict__
    )
    sources: list[Any] = [init]
    if issubclass(cls, TorchLayer):
        if not hasattr(cls, "torch_cls"):  # an abstract base: not a layer a spec builds
            return {}
        params = list(cls.signature().parameters.values())
        # the torch class's own annotations, nearest first (nn.RNN takes *args and
        # leaves them to RNNBase)
        sources = [
            c.__dict__["__init__"]
            for c in cls.torch_cls.__mro__
            if "__init__" in c.__dict__ and c is not object
        ]
    else:
        params = list(inspect.signature(init).parameters.values())
    hints = [_hints(f) for f in sources]
    fields: dict[str, Kinds] = {}
    for p in params:
        if p.name in ("self", "name") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        kinds: Kinds | None = None
        for found in hints:
            if p.name in found:
                kinds = _kinds(found[p.name])
                break
        else:
            if p.annotation is not p.empty and not isinstance(p.annotation, str):
                kinds = _kinds(p.annotation)
            elif p.default is not p.empty and type(p.default) in (bool, int, float, str):
                kinds = _kinds(type(p.default))
        if kinds is not None:
            if p.default is None:  # an optional argument left out is written as null
                kinds = kinds | {type(None)}
            fields[p.name] = kinds
    return fields


_FIELDS: dict[type, dict[str, Kinds]] = {}


def check_config(cls: type, config: dict[str, Any], where: str) -> None:
    """Raise SpecError for a config value whose kind the layer's argument does not take."""
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = _field_kinds(cls)
    for key, value in config.items():
        kinds = fields.get(key)
        if kinds is None:
            continue
        kind = type(value)
        if kind in kinds:
            if kind is list or kind is tuple:
                _check_items(cls, key, value, where)
            continue
        raise SpecError(_message(cls, key, value, kinds, where))


def _check_items(cls: type, key: str, value: Any, where: str) -> None:
    # sizes such as kernel_size: [3, 3]; a string or a boolean in them is never meant
    for i, item in enumerate(value):
        if type(item) is str or type(item) is bool:
            raise SpecError(
                f"{where} ({cls.__name__}): config.{key}[{i}]={item!r} is {_WORDS[type(item)]}, "
                f"but {key} takes numbers; write each item as a plain number, without quotes"
            )


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _message(cls: type, key: str, value: Any, kinds: Kinds, where: str) -> str:
    expected = " or ".join(_WORDS[k] for k in _WORDS if k in kinds)
    got = "a float" if type(value) is float else _WORDS.get(type(value), "a mapping")
    word = value.strip().lower() if isinstance(value, str) else None
    if bool in kinds and word in (*_TRUE, *_FALSE):
        fix = f"write {key}: {'true' if word in _TRUE else 'false'}, a boolean without quotes"
    elif isinstance(value, str):
        fix = f"write {key} as {expected}, without quotes"
    else:
        fix = f"give {key} {expected}"
    return (
        f"{where} ({cls.__name__}): config.{key}={value!r} is {got}, but {key} takes "
        f"{expected}; {fix}"
    )
