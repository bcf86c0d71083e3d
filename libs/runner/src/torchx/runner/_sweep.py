"""A sweep: one component run once per set of argument values (a trial).

A sweep is a grid (every combination of the values given for each argument) or an
explicit list of argument sets, over the component's own typed arguments. Values are kept
as the text the command line would carry (``--lr=0.001``), so one reader
(``ComponentSchema.read``) checks them, here before anything is submitted, and again when
each trial's app is made.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from torchx.schedulers.sweep_names import ENV_SWEEP_ID, ENV_SWEEP_INDEX
from torchx.specs import SpecsError, closest

if TYPE_CHECKING:
    from torchx.specs import ComponentArg, ComponentSchema

SweepValue = str | int | float | bool

# Environment every trial's replicas get besides which sweep and which trial
# (``ENV_SWEEP_ID``, ``ENV_SWEEP_INDEX``, which the schedulers read back): with which
# arguments.
ENV_SWEEP_ARGS = "TORCHX_SWEEP_ARGS"
ENV_SWEEP_ARG_PREFIX = "TORCHX_SWEEP_ARG_"


class SweepError(SpecsError):
    """A sweep that cannot run; the message names the argument and the fix."""


def _text(value: SweepValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, (str, int, float)):
        raise SweepError("sweep value", value, "give a str, int, float or bool")
    return str(value)


@dataclass(frozen=True)
class Sweep:
    """The trials of one sweep of ``component``.

    ``trials`` holds each trial's argument values (parameter name -> text as on the
    command line); ``base_args`` are the component arguments every trial shares (CLI
    tokens); at most ``parallel`` trials run at once (0: no limit).
    """

    component: str
    trials: tuple[dict[str, str], ...]
    base_args: tuple[str, ...] = ()
    parallel: int = 0
    names: tuple[str, ...] = field(default=())

    @classmethod
    def grid(
        cls,
        component: str,
        grid: Mapping[str, Sequence[SweepValue]],
        base_args: Sequence[str] = (),
        parallel: int = 0,
    ) -> Sweep:
        """Every combination of ``grid``'s values, the last argument varying fastest."""
        if not grid:
            raise SweepError("sweep", {}, "name at least one argument to sweep: --sweep NAME=V1,V2")
        for name, values in grid.items():
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
                # a str is a sequence of characters: each would be a trial
                raise SweepError(
                    f"sweep argument {name!r}",
                    values,
                    f"give a list of the values to try, e.g. {{{name!r}: [{values!r}]}}",
                )
            if not values:
                raise SweepError(
                    f"sweep argument {name!r}",
                    values,
                    f"give at least one value to try: --sweep {name}=V1,V2",
                )
        names = tuple(grid)
        texts = [[_text(v) for v in grid[n]] for n in names]
        trials = tuple(dict(zip(names, combo, strict=True)) for combo in itertools.product(*texts))
        return cls(component, trials, _base_args(base_args), _check_parallel(parallel), names)

    @classmethod
    def of(
        cls,
        component: str,
        trials: Sequence[Mapping[str, SweepValue]],
        base_args: Sequence[str] = (),
        parallel: int = 0,
    ) -> Sweep:
        """One trial per mapping in ``trials`` (argument name -> value)."""
        if not trials:
            raise SweepError("sweep trials", [], "give at least one set of arguments")
        names: list[str] = []
        out = []
        for t in trials:
            if not isinstance(t, Mapping):
                raise SweepError("sweep trial", t, "give a mapping of argument name to value")
            out.append({k: _text(v) for k, v in t.items()})
            names += [k for k in t if k not in names]
        return cls(
            component, tuple(out), _base_args(base_args), _check_parallel(parallel), tuple(names)
        )

    @classmethod
    def from_cli(
        cls, component: str, specs: Sequence[str], base_args: Sequence[str], parallel: int
    ) -> Sweep:
        """The grid of ``--sweep NAME=V1,V2`` options (each given once per argument)."""
        grid: dict[str, list[str]] = {}
        for spec in specs:
            name, sep, values = spec.partition("=")
            name = name.strip()
            if not sep or not name:
                raise SweepError(
                    "--sweep", spec, "write it as NAME=V1,V2 (e.g. --sweep lr=1e-3,1e-4)"
                )
            if name in grid:
                raise SweepError(
                    "--sweep", spec, f"{name} is swept twice; give all its values in one --sweep"
                )
            given = [v.strip() for v in values.split(",")]
            if not any(given):
                raise SweepError(
                    f"--sweep {name}", spec, f"the grid is empty; give values: --sweep {name}=V1,V2"
                )
            if "" in given:
                # a doubled or trailing comma is a typo; dropping it would run fewer trials
                kept = ",".join(v for v in given if v)
                raise SweepError(
                    f"--sweep {name}",
                    values,
                    f"value {given.index('') + 1} is empty (a doubled or trailing comma); "
                    f"did you mean --sweep {name}={kept}?",
                )
            grid[name] = given
        return cls.grid(component, grid, base_args, parallel)

    def __len__(self) -> int:
        return len(self.trials)

    def trial_argv(self, index: int) -> list[str]:
        """The component's CLI tokens for trial ``index``: its own, then the shared ones.

        Its own come first: the shared tokens may end in the component's ``*args`` (``utils.sh
        echo hi``, with or without ``--``), which take every token after the first of them,
        so a flag put after them would reach the program instead of the component."""
        own = [f"--{k}={v}" for k, v in self.trials[index].items()]
        return own + list(self.base_args)


def _base_args(base_args: Sequence[str]) -> tuple[str, ...]:
    """The shared component arguments as CLI tokens; a single str would be split into its
    characters, each one a token."""
    if isinstance(base_args, (str, bytes)) or not isinstance(base_args, Sequence):
        import shlex

        example = shlex.split(base_args) if isinstance(base_args, str) else ["--epochs", "3"]
        raise SweepError(
            "base_args", base_args, f"give a list of command-line tokens, e.g. {example!r}"
        )
    for token in base_args:
        if not isinstance(token, str):
            raise SweepError("base_args token", token, f"give it as text, e.g. {str(token)!r}")
    return tuple(base_args)


def _check_parallel(parallel: int) -> int:
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 0:
        raise SweepError(
            "parallel", parallel, "give how many trials may run at once (1 or more; 0: all)"
        )
    return parallel


def check_sweep(schema: ComponentSchema, sweep: Sweep) -> None:
    """Refuse, naming the argument and the fix, any trial value the component would not
    take: an unknown argument, a value not of the argument's type, an argument given both
    as shared and as swept. Nothing is called or submitted."""
    if not sweep.trials:
        raise SweepError("sweep trials", [], "give at least one set of arguments")
    shared = schema.read(list(sweep.base_args)).values
    for name in sweep.names:
        arg = schema.option(name)
        if arg is None:
            raise SweepError("sweep argument", name, _unknown_fix(schema, name))
        if arg.name != name:
            # The name is each trial's TORCHX_SWEEP_ARG_<NAME>, its key in TORCHX_SWEEP_ARGS
            # and its column in the status table: one spelling, the parameter's, so that a
            # name swept under two spellings is one argument swept twice.
            raise SweepError(
                "sweep argument",
                name,
                f"{schema.name} calls it {arg.name}; write it as --sweep {arg.name}=V1,V2",
            )
        if arg.name in shared:
            raise SweepError(
                "sweep argument",
                name,
                f"also given as --{arg.name} to {schema.name}; give it once, as --sweep or as "
                "a component argument",
            )
    seen: dict[tuple[str, str], None] = {}
    for trial in sweep.trials:
        for name, value in trial.items():
            if (name, value) in seen:
                continue
            seen[(name, value)] = None
            arg = schema.option(name)
            assert arg is not None
            try:
                schema.read([f"--{arg.name}={value}"])
            except SpecsError as e:
                raise SweepError(
                    f"sweep argument {name!r}", value, _value_fix(schema.name, arg, e.expected)
                ) from None


def _unknown_fix(schema: ComponentSchema, name: str) -> str:
    """The fix for sweeping ``name``, no named argument of ``schema``: the near one, or,
    where it is the component's ``*args`` or the component has no named argument (the
    list of known ones would be empty), that a sweep varies named arguments only."""
    options = list(schema.options)
    rem = schema.remainder
    if rem is not None and rem.name == name.replace("-", "_"):
        why = f"{schema.name} takes it as *{rem.name}, which a sweep cannot vary"
    elif not options:
        only = f" (only *{rem.name})" if rem is not None else ""
        why = f"{schema.name} has no named argument for a sweep to vary{only}"
    else:
        return f"{schema.name} has no such argument; {closest(name, options)}"
    return (
        f"{why}; a sweep varies named, typed arguments ({', '.join(options) or 'none here'}): "
        "sweep a component that takes the varying value as one"
    )


# Values that a scalar argument of each type takes, to show in the fix of a bad one.
_EXAMPLES = {int: "1,2", float: "0.1,0.01", bool: "true,false"}


def _value_fix(component: str, arg: ComponentArg, expected: str) -> str:
    """What the argument takes (in the words of the reader that refused the value, which
    say the type once) and values that it would take."""
    example = _EXAMPLES.get(arg.type.item) if arg.type.kind == "scalar" else None
    fix = f"e.g. --sweep {arg.name}={example}" if example else f"fix it in --sweep {arg.name}="
    return f"{component} --{arg.name} takes {expected.removeprefix('expected ')}; {fix}"


__all__ = [
    "ENV_SWEEP_ARGS",
    "ENV_SWEEP_ARG_PREFIX",
    "ENV_SWEEP_ID",
    "ENV_SWEEP_INDEX",
    "Sweep",
    "SweepError",
    "SweepValue",
    "check_sweep",
]
