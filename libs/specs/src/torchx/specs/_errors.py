"""The one error type that every specs parser and validator raises."""

from __future__ import annotations


class SpecsError(ValueError):
    """Bad input to a torchx spec: the message names the field, the value and the fix.

    A subclass of ValueError so that callers that already catch ValueError keep working.
    """

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"{field}: got {value!r}; {expected}")


def closest(name: str, choices: list[str] | tuple[str, ...] | set[str], n: int = 3) -> str:
    """The end of an error message about an unknown name: "did you mean 'x'?" for near
    matches, else the known names (the first 12). Public so that every torchx package words
    these hints alike: ``SpecsError("scheduler", name, closest(name, known))``.
    """
    import difflib  # only paid for on the error path

    ordered = sorted(choices)
    near = difflib.get_close_matches(name, ordered, n=n, cutoff=0.5)
    if near:
        return "did you mean " + " or ".join(repr(c) for c in near) + "?"
    shown = ", ".join(ordered[:12]) + (", ..." if len(ordered) > 12 else "")
    return f"known: {shown}"
