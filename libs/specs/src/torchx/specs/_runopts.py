"""Run options: the typed, documented settings a scheduler accepts (``-cfg k=v,...``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from torchx.specs._errors import InvalidRunConfigException, SpecsError, closest

# The value types a run option can have. Lists and maps hold strings.
CfgVal = str | int | float | bool | list[str] | dict[str, str] | None
_TYPES: dict[type, str] = {
    str: "str",
    int: "int",
    float: "float",
    bool: "bool",
    list: "list of str (a;b;c)",
    dict: "map of str (k1:v1;k2:v2)",
}

# How a bool is written, in any case: one reading for run options and component arguments
# (``_arg_types`` imports it), so ``-cfg quiet=yes`` and ``--debug yes`` cannot disagree.
BOOL_WORDS = {
    **dict.fromkeys(("true", "1", "yes", "on", "y"), True),
    **dict.fromkeys(("false", "0", "no", "off", "n"), False),
}


def _normalize_type(type_: object) -> type | None:
    """``list``/``dict`` for ``List[str]``/``Dict[str, str]`` (the spelling pytorch/torchx
    schedulers use), the type itself for the scalars, None for anything else."""
    if type_ in _TYPES:
        return type_
    import typing

    origin, args = typing.get_origin(type_), typing.get_args(type_)
    if origin is list and args == (str,):
        return list
    if origin is dict and args == (str, str):
        return dict
    return None


def get_type_name(tp: object) -> str:
    """A type for people: a class's name (``int``, ``list``), else its text
    (``typing.List[str]``), as in 0.7."""
    name = getattr(tp, "__name__", None)
    return name if isinstance(name, str) and getattr(tp, "__module__", "") != "typing" else str(tp)


@dataclass(frozen=True)
class runopt:
    default: CfgVal
    opt_type: type
    is_required: bool
    help: str


class runopts:
    """The run options of one scheduler: names, types, defaults, help."""

    def __init__(self) -> None:
        self._opts: dict[str, runopt] = {}

    def add(
        self,
        cfg_key: str,
        type_: object,
        help: str,
        default: CfgVal = None,
        required: bool = False,
    ) -> None:
        opt_type = _normalize_type(type_)
        if opt_type is None:
            raise TypeError(
                f"run option {cfg_key}: type {type_} is not one of str, int, float, bool, "
                "List[str] or Dict[str, str]"
            )
        if required and default is not None:
            raise ValueError(f"run option {cfg_key}: a required option has no default")
        if opt_type in (list, dict) and isinstance(default, (list, dict)) and not default:
            # 0.7 took an empty list or dict as the default of either container option
            # (``Dict[str, str]`` options with ``default=[]`` are common in its plug-ins):
            # keep them loading, with the empty value of the option's own type.
            default = opt_type()
        if default is not None and not self.is_type(default, opt_type):
            raise TypeError(
                f"run option {cfg_key}: default {default!r} is not of type {get_type_name(type_)}"
            )
        self._opts[cfg_key] = runopt(default, opt_type, required, help)

    @staticmethod
    def is_type(obj: object, tp: object) -> bool:
        """Whether ``obj`` is a value of run option type ``tp`` (``List[str]`` works too)."""
        opt_type = _normalize_type(tp)
        if opt_type is None:
            return False
        try:
            _check_type("", obj, opt_type)
        except SpecsError:
            return False
        return True

    def get(self, name: str) -> runopt | None:
        return self._opts.get(name)

    def __iter__(self) -> Iterator[tuple[str, runopt]]:
        return iter(self._opts.items())

    def __len__(self) -> int:
        return len(self._opts)

    def __contains__(self, name: object) -> bool:
        return name in self._opts

    def update(self, other: runopts) -> None:
        self._opts.update(other._opts)

    def resolve(self, cfg: Mapping[str, CfgVal] | None) -> dict[str, CfgVal]:
        """Check ``cfg`` against these options and fill in defaults.

        Unknown names, wrong types and missing required options are errors; a string value
        for a typed option is parsed (so config files and the CLI can pass text).
        """
        cfg = dict(cfg or {})
        resolved: dict[str, CfgVal] = {}
        for name in cfg:
            if name not in self._opts:
                raise InvalidRunConfigException(
                    closest(name, list(self._opts)) if self._opts else "no run options exist",
                    name,
                    cfg,
                    value=cfg[name],
                )
        for name, opt in self._opts.items():
            value = cfg.get(name)
            if value is None:
                if opt.is_required:
                    raise InvalidRunConfigException(f"it is required ({opt.help})", name, cfg)
                resolved[name] = opt.default
                continue
            if isinstance(value, str) and opt.opt_type is not str:
                value = parse_value(name, value, opt.opt_type)
            _check_type(name, value, opt.opt_type)
            resolved[name] = value
        return resolved

    def cfg_from_str(self, cfg_str: str) -> dict[str, CfgVal]:
        """Parse ``k=v,list=a;b,map=k1:v1;k2:v2`` into typed values, as pytorch/torchx 0.7:
        pairs are separated by ``,`` or ``;`` (``FOO=v1;v2;BAR=v3`` gives FOO the list
        ``v1;v2``), and keys this object does not declare are left out (``-cfg`` and
        config files check them first, naming the closest option)."""
        return {
            name: self.value_from_str(name, value)
            for name, value in split_cfg(cfg_str).items()
            if name in self._opts
        }

    def value_from_str(self, name: str, text: str) -> CfgVal:
        """The value of option ``name`` read from ``text`` (a config file's value)."""
        return parse_value(name, text, self._opts[name].opt_type)

    def __str__(self) -> str:
        if not self._opts:
            return "    (no run options)"
        rows = []
        for name, opt in sorted(self._opts.items()):
            req = "required" if opt.is_required else f"default: {opt.default!r}"
            rows.append(f"    {name} ({_TYPES[opt.opt_type]}, {req})\n        {opt.help}")
        return "\n".join(rows)


def split_cfg(text: str) -> dict[str, str]:
    """Split ``-cfg``'s ``k=v,k2=v2`` (or ``k=v;k2=v2``) into raw strings, as pytorch/torchx
    0.7's ``runopts.cfg_from_str`` did, with the reader of ``Dict`` component arguments
    (``torchx.util.types.to_dict``): the last ``,`` or ``;`` before the next ``KEY=`` ends a
    value, any other stays in it (a list ``a;b``, a map ``k1:v1;k2:v2``, ``--gres=gpu:1``).
    A value written ``''`` or ``""`` is empty. Malformed text is a SpecsError about ``cfg``."""
    # imported here: ``import torchx.specs`` loads this module, and the argument reader
    # (with torchx.util.types) is needed only by a command that reads -cfg or arguments
    from torchx.specs._arg_types import read_pairs

    return read_pairs(text, "cfg")


def parse_value(name: str, text: str, opt_type: type) -> CfgVal:
    text = text.strip()
    if opt_type is bool:
        word = BOOL_WORDS.get(text.lower())
        if word is None:
            raise InvalidRunConfigException("expected a bool: true or false", name, value=text)
        return word
    if opt_type in (int, float):
        try:
            return opt_type(text)
        except ValueError:
            raise InvalidRunConfigException(
                f"expected {_TYPES[opt_type]}", name, value=text
            ) from None
    if opt_type is list:
        return [v.strip() for v in text.replace(";", ",").split(",") if v.strip()]
    if opt_type is dict:
        out: dict[str, str] = {}
        for item in text.replace(";", ",").split(","):
            if not item.strip():
                continue
            k, sep, v = item.partition(":")
            if not sep:
                k, sep, v = item.partition("=")
            if not sep:
                raise InvalidRunConfigException(
                    "expected a map like key1:value1;key2:value2", name, value=text
                )
            out[k.strip()] = v.strip()
        return out
    return text


def _check_type(name: str, value: object, opt_type: type) -> None:
    ok = isinstance(value, opt_type)
    if opt_type is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if opt_type is int and isinstance(value, bool):
        ok = False
    if opt_type is list and ok:
        ok = all(isinstance(v, str) for v in value)  # type: ignore[attr-defined]
    if opt_type is dict and ok:
        ok = all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())  # type: ignore[attr-defined]
    if not ok:
        raise InvalidRunConfigException(f"expected {_TYPES[opt_type]}", name, value=value)
