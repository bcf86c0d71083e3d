"""``.torchxconfig`` helpers with pytorch/torchx's ``torchx.runner.config`` names.

The runner and the CLI read config files through ``torchx.runner.load_config``; these
functions give the same files the shape pytorch/torchx's callers expect: run options
merged into a ``cfg`` dict, ``[prefix:name]`` sections as plain dicts, and a template
of every scheduler's run options.

Precedence differs from pytorch/torchx in one way: of several files the later one wins
(``./.torchxconfig`` over ``~/.torchxconfig``), as everywhere in this project.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from torchx.runner._config import (
    CONFIG_ENV,
    CONFIG_FILE,
    PLACEHOLDER_PREFIX,
    UNSET,
    ConfigError,
    config_files,
    is_unset,
)
from torchx.schedulers import get_scheduler_factories
from torchx.specs import CfgVal, SpecsError, runopt, runopts

ENV_TORCHXCONFIG = CONFIG_ENV
CONFIG_PREFIX_DELIM = ":"
# The folders searched for .torchxconfig when none are given, lowest precedence first.
# Found at each call (the current directory may change); a caller may replace this list.
DEFAULT_CONFIG_DIRS: list[str] = [str(Path.home()), str(Path.cwd())]
_DEFAULT_CONFIG_DIRS = DEFAULT_CONFIG_DIRS


def _parser() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    return parser


def _run_opts(scheduler: str) -> runopts:
    factories = get_scheduler_factories()
    if scheduler not in factories:
        from torchx.schedulers import UnknownSchedulerError

        raise UnknownSchedulerError(scheduler, list(factories))
    with factories[scheduler]("torchx") as sched:
        return sched.run_opts()


def find_configs(dirs: Iterable[str] | None = None) -> list[str]:
    """The config files that apply, lowest precedence first.

    ``$TORCHXCONFIG`` alone when set; otherwise ``.torchxconfig`` in each of ``dirs``
    (default: the home directory, then the current one) that has one.
    """
    if dirs is None and DEFAULT_CONFIG_DIRS is not _DEFAULT_CONFIG_DIRS:
        dirs = DEFAULT_CONFIG_DIRS
    if os.environ.get(CONFIG_ENV) or not dirs:
        return [str(p) for p in config_files()]
    found = []
    for d in dirs:
        path = Path(d) / CONFIG_FILE
        if path.is_file() and str(path) not in found:
            found.append(str(path))
    return found


def load(scheduler: str, f: TextIO, cfg: dict[str, CfgVal]) -> None:
    """Add the run options of section ``[scheduler]`` in ``f`` that ``cfg`` does not set.

    Values are typed by the scheduler's run options; a key it does not know is a
    ConfigError naming the option and the options it has. An option written as ``None``
    (or a ``#FIXME`` placeholder, as ``dump`` writes) is added as None, as in 0.7: the
    scheduler's default then applies.
    """
    _load(scheduler, f, cfg, keep_unset=True)


def _load(scheduler: str, f: TextIO, cfg: dict[str, CfgVal], keep_unset: bool) -> None:
    parser = _parser()
    parser.read_file(f)
    if not parser.has_section(scheduler):
        return
    opts = _run_opts(scheduler)
    origin = getattr(f, "name", "<config>")
    for key, value in parser.items(scheduler):
        if key in cfg:
            continue
        if is_unset(value):
            if keep_unset and key in opts:
                cfg[key] = None
            continue
        if key not in opts:
            from torchx.specs import closest

            known = [name for name, _ in opts]
            raise ConfigError(
                str(origin),
                scheduler,
                key,
                value,
                f"not a run option of {scheduler}; "
                + (closest(key, known) if known else f"{scheduler} takes no run options"),
            )
        try:
            cfg[key] = opts.value_from_str(key, value)
        except SpecsError as e:
            raise ConfigError(str(origin), scheduler, key, value, e.expected) from None


def apply(scheduler: str, cfg: dict[str, CfgVal], dirs: Iterable[str] | None = None) -> None:
    """Fill ``cfg`` with ``scheduler``'s run options from the config files.

    What ``cfg`` already holds wins; then the files of ``find_configs(dirs)``, the later
    file winning.
    """
    from_files: dict[str, CfgVal] = {}
    for path in reversed(find_configs(dirs)):
        with open(path) as f:
            # an unset value in a later file must not hide an earlier file's value
            _load(scheduler, f, from_files, keep_unset=False)
    for key, value in from_files.items():
        cfg.setdefault(key, value)


def load_sections(prefix: str, dirs: Iterable[str] | None = None) -> dict[str, dict[str, str]]:
    """The sections named ``[PREFIX:NAME]``, as ``{NAME: {key: value}}`` (later files win)."""
    sections: dict[str, dict[str, str]] = {}
    head = prefix + CONFIG_PREFIX_DELIM
    for path in find_configs(dirs):
        parser = _parser()
        parser.read(path)
        for section in parser.sections():
            name = section[len(head) :] if section.startswith(head) else ""
            if name:
                sections.setdefault(name, {}).update(parser.items(section))
    return sections


def get_configs(prefix: str, name: str, dirs: Iterable[str] | None = None) -> dict[str, str]:
    """The contents of section ``[PREFIX:NAME]``, or an empty dict."""
    return load_sections(prefix, dirs).get(name, {})


def get_config(prefix: str, name: str, key: str, dirs: Iterable[str] | None = None) -> str | None:
    """The value of ``key`` in section ``[PREFIX:NAME]``, or None."""
    return get_configs(prefix, name, dirs).get(key)


def _placeholder(opt: runopt) -> str:
    from torchx.specs import get_type_name

    # container options hold list/dict, which stand for List[str]/Dict[str, str]
    kind = opt.opt_type
    spelled = (
        "List[str]" if kind is list else "Dict[str, str]" if kind is dict else get_type_name(kind)
    )
    return f"{PLACEHOLDER_PREFIX}:({spelled}) {opt.help}"[:60]


def _default_text(default: Any) -> str:
    if isinstance(default, list):
        return ";".join(default) if default else UNSET
    if isinstance(default, dict):
        return ";".join(f"{k}:{v}" for k, v in default.items()) if default else UNSET
    return str(default)


def dump(f: TextIO, schedulers: list[str] | None = None, required_only: bool = False) -> None:
    """Write a ``.torchxconfig`` template with the run options of ``schedulers`` (default:
    all registered ones): defaults filled in, required options marked ``#FIXME``."""
    from torchx.schedulers import MissingDependencyError

    names = schedulers or sorted(get_scheduler_factories())
    parser = _parser()
    for name in names:
        try:
            opts = _run_opts(name)
        except (MissingDependencyError, ModuleNotFoundError):
            if schedulers:
                raise
            continue  # a scheduler whose client library is not installed
        parser.add_section(name)
        for key, opt in opts:
            if opt.is_required:
                parser.set(name, key, _placeholder(opt))
            elif not required_only:
                parser.set(name, key, _default_text(opt.default))
    parser.write(f, space_around_delimiters=True)


__all__ = [
    "CONFIG_FILE",
    "CONFIG_PREFIX_DELIM",
    "DEFAULT_CONFIG_DIRS",
    "ENV_TORCHXCONFIG",
    "apply",
    "dump",
    "find_configs",
    "get_config",
    "get_configs",
    "get_scheduler_factories",
    "load",
    "load_sections",
]
