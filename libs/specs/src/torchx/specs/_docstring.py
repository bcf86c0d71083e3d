"""A component's docstring as help text: its summary, description and each argument's help.

``docstring_parser`` reads it, in any of the styles it detects (Google ``Args:``, reST
``:param x:``, numpydoc ``Parameters`` and epydoc ``@param x:``), as pytorch/torchx 0.7
did. It is imported when a docstring is parsed, not with ``torchx.specs``, and a
component's schema parses its docstring only when its help is asked for.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field


@dataclass
class Docstring:
    summary: str = ""
    description: str = ""
    args: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> Docstring:
    """Summary (the first paragraph, on one line), the rest of the description, and the
    help of each argument (its lines joined); a docstring no style reads is all text."""
    if not doc:
        return Docstring()
    import docstring_parser

    text = inspect.cleandoc(doc)
    try:
        parsed = docstring_parser.parse(text)
    except docstring_parser.ParseError:
        # help text must not fail on a docstring that no style reads (an ``Args:``
        # section whose lines name nothing): show it whole, with no argument help
        body, args = text, {}
    else:
        body = parsed.description or ""
        args = {
            # ``*args`` and ``**kwargs`` are described under their parameter's name
            p.arg_name.lstrip("*"): " ".join(p.description.split())
            for p in parsed.params
            if p.description
        }
    summary, _, rest = body.strip().partition("\n\n")
    return Docstring(" ".join(summary.split()), rest.strip(), args)
