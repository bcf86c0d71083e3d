"""kfp pipeline values (pipeline parameters, task outputs) written straight into an app.

Inside a ``@dsl.pipeline`` function a parameter is a kfp ``PipelineChannel``: users hand it
to a component (``utils.echo(msg=msg)``) or embed it in an f-string (``f"--lr={lr}"``), as
0.7 with kfp v1 allowed. Its text is kfp's channel pattern, which kfp itself resolves when
that text is passed to a task as a string input; so each command or arg element holding
one becomes a string input of the component, and the task gets the element's text.
"""

from __future__ import annotations

import re
from typing import TypeVar

from torchx.pipelines.kfp._errors import KfpAdapterError

# kfp's textual form of a channel; only its presence and type matter here.
_CHANNEL = re.compile(r"\{\{channel:task=[^;]*;name=([^;]*);type=([^;]*);\}\}")
_INPUT = "torchx_arg_{}"
_T = TypeVar("_T")


def is_channel(value: object) -> bool:
    # Asked of the type, so that kfp need not be imported to answer.
    return type(value).__module__.startswith("kfp.") and hasattr(value, "pattern")


def as_text(value: _T) -> _T | str:
    """A channel as the text kfp resolves; anything else unchanged (validation judges it)."""
    return str(value) if is_channel(value) else value


def has_channel(text: str) -> bool:
    return _CHANNEL.search(text) is not None


def value_names(text: str) -> list[str]:
    """The names of the pipeline values in ``text``, as the pipeline calls them."""
    return [m.group(1) for m in _CHANNEL.finditer(text)]


def _is_artifact_type(kind: str) -> bool:
    return kind.startswith("system.") or "@" in kind


def is_artifact(value: object) -> bool:
    return is_channel(value) and _is_artifact_type(str(getattr(value, "channel_type", "")))


def as_string_input(value: object) -> object:
    """A value for a string input: a non-string pipeline value goes as kfp's text for it,
    which kfp converts at run time instead of refusing the type."""
    if is_channel(value) and getattr(value, "channel_type", "String") != "String":
        return str(value)
    return value


def channel_input(field: str, text: str, position: int) -> str:
    """The component input that carries ``text``; refuses artifacts, which have no text."""
    for match in _CHANNEL.finditer(text):
        name, kind = match.group(1), match.group(2)
        if _is_artifact_type(kind):
            raise KfpAdapterError(
                field,
                text,
                f"{name!r} is an artifact, which has no text form; write input_path({name!r}) "
                f"there and pass inputs={{{name!r}: task.outputs[...]}}",
            )
    return _INPUT.format(position)
