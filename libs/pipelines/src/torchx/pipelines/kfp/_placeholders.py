"""Placeholders that connect stages: written into a role's args, filled in by kfp.

A component author writes ``output_path("data")`` where the app takes an output file and
``input_path("data")`` where the next app reads it; ``task_from_app`` then wires the two
tasks together, which is what makes the pipeline a DAG rather than a list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from torchx.pipelines.kfp._errors import KfpAdapterError

RefKind = Literal["input", "output", "param", "app_id", "channel"]

# ``${kfp.<kind>:<name>}``: the dot keeps it apart from both torchx macros (``${app_id}``)
# and shell parameter expansion (``${var:offset}``), so neither ever matches it.
_TOKEN = re.compile(r"\$\{kfp\.([A-Za-z_]*):([^}]*)\}")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_USER_KINDS: dict[str, RefKind] = {"input": "input", "output": "output", "param": "param"}

# Input name used for the app_id macro; user names may not take the prefix.
APP_ID_INPUT = "torchx_app_id"
_RESERVED_PREFIX = "torchx_"


@dataclass(frozen=True)
class Ref:
    """A reference to a component input or output inside an arg."""

    kind: RefKind
    name: str


Segment = str | Ref


def _check_name(kind: str, name: object) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise KfpAdapterError(
            f"{kind} name",
            name,
            "use lowercase letters, digits and '_', starting with a letter (e.g. 'data')",
        )
    if name.startswith(_RESERVED_PREFIX):
        raise KfpAdapterError(
            f"{kind} name", name, f"names starting with {_RESERVED_PREFIX!r} are reserved"
        )
    return name


def output_path(name: str) -> str:
    """Where the stage writes its output artifact ``name``; a later stage reads it.

    The app sees a local path; kfp uploads whatever is there when the stage ends and
    hands it to every stage that takes ``task.outputs[name]`` as an input.
    """
    return f"${{kfp.output:{_check_name('output', name)}}}"


def input_path(name: str) -> str:
    """The local path of input artifact ``name``, downloaded by kfp before the stage runs.

    Pass the upstream artifact with ``task_from_app(app, inputs={name: upstream.outputs[...]})``.
    """
    return f"${{kfp.input:{_check_name('input', name)}}}"


def param(name: str) -> str:
    """The value of string input ``name``: a pipeline parameter or a constant.

    Pass it with ``task_from_app(app, inputs={name: value})``.
    """
    return f"${{kfp.param:{_check_name('param', name)}}}"


def split_refs(field: str, text: str) -> list[Segment]:
    """``text`` cut into literal pieces and references, in order."""
    segments: list[Segment] = []
    pos = 0
    for match in _TOKEN.finditer(text):
        kind, name = match.group(1), match.group(2)
        if kind == "app_id" and name == APP_ID_INPUT:
            ref = Ref("app_id", name)
        elif kind in _USER_KINDS:
            ref = Ref(_USER_KINDS[kind], _check_name(kind, name))
        else:
            raise KfpAdapterError(
                field,
                text,
                f"unknown placeholder ${{kfp.{kind}:...}}; use input_path(), output_path() "
                "or param() from torchx.pipelines.kfp",
            )
        if match.start() > pos:
            segments.append(text[pos : match.start()])
        segments.append(ref)
        pos = match.end()
    if pos < len(text) or not segments:
        segments.append(text[pos:])
    return segments


# What the app_id macro becomes before the args are split: kfp fills it per task.
APP_ID_TOKEN = f"${{kfp.app_id:{APP_ID_INPUT}}}"


def has_refs(text: str) -> bool:
    return _TOKEN.search(text) is not None
