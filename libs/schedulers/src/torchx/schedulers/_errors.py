"""Errors raised by the scheduler registry and by schedulers themselves."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from torchx.specs import SpecsError, UnknownSchedulerException


class SchedulerError(RuntimeError):
    """A scheduler's backend refused a request or failed to carry it out.

    Bad input (an AppDef, a run option, an app id) is a :class:`~torchx.specs.SpecsError`;
    this is for what only the backend can tell: a queue that rejects the job, an engine that
    cannot be reached, a push that is denied. The message is one sentence,
    ``<scheduler>: <what happened>[; <what to do>]``, with the backend's own words kept.
    """

    def __init__(self, scheduler: str, message: str, fix: str = "") -> None:
        self.scheduler = scheduler
        self.reason = message
        self.fix = fix
        super().__init__(f"{scheduler}: {message}" + (f"; {fix}" if fix else ""))


class UnknownSchedulerError(UnknownSchedulerException, KeyError):
    """No scheduler is registered under the given name; the message lists those that are.

    A subclass of pytorch/torchx's UnknownSchedulerException (a SpecsError), so either
    ``except`` works; also a ``KeyError``, what 0.7's Runner raised for an unknown scheduler,
    so 0.7's ``except KeyError`` still catches it.
    """

    def __init__(self, name: object, known: list[str], reason: str = "") -> None:
        listed = ", ".join(sorted(known)) or "none"
        if not reason and isinstance(name, str):
            from torchx.specs import close_matches  # only paid for on the error path

            near = [k for k in known if k.lower() == name.lower()] or close_matches(name, known)
            if near:  # a typo (slrum): the name meant first, then every name
                reason = "did you mean " + " or ".join(repr(n) for n in near) + "? "
        super().__init__(name, f"{reason}known schedulers: {listed}")

    def __str__(self) -> str:
        # KeyError.__str__ would repr() the message and wrap it in quotes.
        return str(self.args[0])


class MissingDependencyError(ModuleNotFoundError):
    """A scheduler's client library is not installed; the message says which extra has it.

    A ``ModuleNotFoundError``, what 0.7 let through from the failed import."""

    def __init__(self, scheduler: str, module: str, extra: str) -> None:
        self.scheduler = scheduler
        self.module = module
        self.extra = extra
        super().__init__(
            f"the {scheduler} scheduler needs the {module!r} package, which is not installed; "
            f'install it with: pip install "torchx-schedulers[{extra}]"',
            name=module,
        )


def check_params(scheduler: str, params: Mapping[str, object], accepted: Iterable[str]) -> None:
    """Refuse a scheduler parameter that ``scheduler``'s factory does not take.

    Factories call this with their ``**params`` so that a misspelt name is an error
    rather than silently ignored.
    """
    known = sorted(accepted)
    unknown = sorted(k for k in params if k not in known)
    if unknown:
        takes = ", ".join(known) if known else "no parameters"
        raise SpecsError(
            f"{scheduler} scheduler parameter",
            unknown[0] if len(unknown) == 1 else unknown,
            f"the {scheduler} scheduler takes {takes}; leave the others out "
            "(a Runner passes each scheduler only the parameters it declares)",
        )


def require(module: str, *, scheduler: str, extra: str) -> object:
    """Import ``module`` for ``scheduler``; a missing one raises MissingDependencyError.

    Schedulers call this inside the methods that need their client library, so that
    importing the scheduler (to list it, to show its capabilities) stays cheap.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and (module == e.name or module.startswith(e.name + ".")):
            raise MissingDependencyError(scheduler, module, extra) from e
        raise
