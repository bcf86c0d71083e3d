"""A small parser for Google-style docstrings: summary, description and ``Args:``."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

_ARGS_HEADERS = {"args", "arguments", "parameters", "params", "keyword args", "kwargs"}
_SECTION = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_ITEM = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)$")


@dataclass
class Docstring:
    summary: str = ""
    description: str = ""
    args: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> Docstring:
    """Summary (first paragraph), the description up to the first section, and arg help."""
    if not doc:
        return Docstring()
    lines = inspect.cleandoc(doc).splitlines()
    out = Docstring()
    body: list[str] = []
    i = 0
    while i < len(lines) and not _SECTION.match(lines[i]):
        body.append(lines[i])
        i += 1
    text = "\n".join(body).strip()
    summary, _, rest = text.partition("\n\n")
    out.summary = " ".join(summary.split())
    out.description = rest.strip()

    section: str | None = None
    item: str | None = None
    item_indent = 0
    for line in lines[i:]:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        m = _SECTION.match(line)
        if m and indent == 0:
            section, item = m.group(1).strip().lower(), None
            continue
        if section not in _ARGS_HEADERS or not stripped:
            continue
        im = _ITEM.match(stripped)
        if im and (item is None or indent <= item_indent):
            item, item_indent = im["name"], indent
            out.args[item] = im["text"].strip()
        elif item is not None:
            out.args[item] = (out.args[item] + " " + stripped).strip()
    return out
