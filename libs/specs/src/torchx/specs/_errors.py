"""The one error type that every specs parser and validator raises."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


def _keeping_arguments(init: Callable[..., None]) -> Callable[..., None]:
    """``init``, a SpecsError constructor, that first keeps the arguments it was given
    when it is the outermost one run (the class the caller named): see ``__reduce__``.
    ``functools.wraps`` keeps its signature for ``help`` and ``inspect``."""

    @functools.wraps(init)
    def __init__(self: SpecsError, *args: Any, **kwargs: Any) -> None:
        if "_made_with" not in vars(self):
            self._made_with = (args, kwargs)
        init(self, *args, **kwargs)

    return __init__


def specs_message(field: str, value: object, expected: str) -> str:
    """The one-line message of a ``SpecsError``: the field, the value and the fix."""
    return f"{field}: got {value!r}; {expected}"


class SpecsError(ValueError):
    """Bad input to a torchx spec: the message names the field, the value and the fix.

    A subclass of ValueError so that callers that already catch ValueError keep working.
    Pickled (an error raised in a worker process reaches its parent so) or copied, an error
    of this class or any subclass is made again from the arguments it was made with.
    """

    # The arguments the error was made with. Exception's own reduce would make it again
    # from its message alone, which no constructor here takes: every constructor (each
    # subclass's too, see ``__init_subclass__``) keeps them instead, so one ``__reduce__``
    # serves every subclass whatever its parameters.
    _made_with: tuple[tuple[Any, ...], dict[str, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in vars(cls):
            cls.__init__ = _keeping_arguments(vars(cls)["__init__"])  # type: ignore[method-assign]

    def __reduce__(self) -> tuple[Any, ...]:
        args, kwargs = self._made_with
        # the attributes as they are now (notes, a caller's own) are restored over the new one
        return _made_again, (type(self), args, kwargs), self.__dict__

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(specs_message(field, value, expected))


SpecsError.__init__ = _keeping_arguments(SpecsError.__init__)  # type: ignore[method-assign]


def _made_again(cls: type[SpecsError], args: tuple[Any, ...], kwargs: dict[str, Any]) -> SpecsError:
    """``cls(*args, **kwargs)``: how a pickled or copied SpecsError is made again."""
    return cls(*args, **kwargs)


class _ProblemsError(SpecsError):
    """Every problem found in one value at once, one per line of the message; ``expected``
    joins them on one line."""

    def __init__(
        self, field: str, value: str, heading: str, lines: list[str], expected: str
    ) -> None:
        # not SpecsError.__init__: its message is one line about one field
        ValueError.__init__(self, heading + "".join(f"\n  {line}" for line in lines))
        self.field, self.value, self.expected = field, value, expected


class _NotGivenError(SpecsError):
    """A value that is missing altogether: the message names the field and the fix, with
    no "got" part (there is nothing to quote)."""

    def __init__(self, field: str, expected: str) -> None:
        # not SpecsError.__init__: its message quotes a value, and there is none
        ValueError.__init__(self, f"{field}: not given; {expected}")
        self.field, self.value, self.expected = field, None, expected


def close_matches(
    name: str, choices: list[str] | tuple[str, ...] | set[str], n: int = 3
) -> list[str]:
    """The (at most ``n``) ``choices`` near enough to ``name`` to be what was meant, closest
    first: the names ``closest`` suggests, for callers that word the suggestion themselves."""
    import difflib  # only paid for on the error path

    return difflib.get_close_matches(name, sorted(choices), n=n, cutoff=0.5)


def closest(name: str, choices: list[str] | tuple[str, ...] | set[str], n: int = 3) -> str:
    """The end of an error message about an unknown name: "did you mean 'x'?" for near
    matches, else the known names (the first 12). Public so that every torchx package words
    these hints alike: ``SpecsError("scheduler", name, closest(name, known))``.
    """
    near = close_matches(name, choices, n)
    if near:
        return "did you mean " + " or ".join(repr(c) for c in near) + "?"
    ordered = sorted(choices)
    shown = ", ".join(ordered[:12]) + (", ..." if len(ordered) > 12 else "")
    return f"known: {shown}"


# The exception names of pytorch/torchx 0.7. Each is a SpecsError, so code that catches
# either the old name or SpecsError/ValueError handles the same failure.


class InvalidRunConfigException(SpecsError):
    """A run option is unknown, missing or of the wrong type; ``cfg_key`` names it."""

    def __init__(
        self,
        invalid_reason: str,
        cfg_key: str,
        cfg: object = None,
        *,
        value: object = None,
    ) -> None:
        self.cfg_key = cfg_key
        self.cfg = cfg
        super().__init__(f"run option {cfg_key!r}", value, invalid_reason)


class _AppHandleError(SpecsError):
    """An error about an app handle, which it keeps as ``app_handle``."""

    def __init__(self, app_handle: object, expected: str) -> None:
        self.app_handle = app_handle
        super().__init__("app handle", app_handle, expected)


class MalformedAppHandleException(_AppHandleError):
    """An app handle that is not ``SCHEDULER://SESSION/APP_ID``."""

    def __init__(self, app_handle: object) -> None:
        super().__init__(
            app_handle,
            "expected SCHEDULER://SESSION/APP_ID as `torchx run` prints it, "
            "e.g. local_cwd://torchx/echo-1a2b3c",
        )


class UnknownAppException(_AppHandleError):
    """The scheduler named in the handle does not know the app (never ran, or purged)."""

    def __init__(self, app_handle: object, expected: str = "") -> None:
        super().__init__(
            app_handle,
            expected or "no such app; `torchx list -s SCHEDULER` shows the known apps",
        )


class UnknownSchedulerException(SpecsError):
    """No scheduler is registered under the given name."""

    def __init__(self, scheduler_backend: object, expected: str = "") -> None:
        self.scheduler_backend = scheduler_backend
        super().__init__(
            "scheduler",
            scheduler_backend,
            expected or "not a registered scheduler; `torchx runopts` lists the registered ones",
        )


class ComponentNotFoundException(SpecsError):
    """No component has the given name; the message lists the closest ones."""
