"""``.torchxconfig``: run options, component argument defaults and CLI defaults from INI files.

Sections:

- ``[SCHEDULER]`` (e.g. ``[local_cwd]``): run options of that scheduler;
- ``[component:NAME]``: defaults for the arguments of component NAME (``dist.ddp``);
- ``[cli:COMMAND]``: defaults for CLI options (``[cli:run]`` knows ``scheduler``,
  ``workspace``, ``component``, ``dryrun``, ``wait``, ``log``; ``[cli:list]`` knows
  ``retention`` and ``limit``);
- ``[torchx:tracker]``: the trackers every app records its run to (``NAME=FACTORY``), and
  ``[tracker:NAME]``: that tracker's ``config`` (see ``torchx.runner._tracking``).

Files: ``$TORCHXCONFIG`` alone when set; otherwise ``~/.torchxconfig`` and then
``./.torchxconfig``, the latter winning key by key.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from torchx.runner._tracking import (
    ENV_TORCHX_TRACKERS,
    TRACKER_NAME,
    TRACKER_NAME_RULE,
    tracker_config_env_var_name,
    trackers_env,
)
from torchx.specs import CfgVal, SpecsError, close_matches, closest, runopts

CONFIG_ENV = "TORCHXCONFIG"
CONFIG_FILE = ".torchxconfig"
COMPONENT_PREFIX = "component:"
CLI_PREFIX = "cli:"
TRACKERS_SECTION = "torchx:tracker"
TRACKER_PREFIX = "tracker:"
# pytorch/torchx 0.7's schedulers: its ``torchx configure --all`` writes a section for each,
# so a section for one that is not installed here is skipped, never mistaken for a typo.
UPSTREAM_SCHEDULERS = frozenset(
    {
        "local_docker",
        "local_cwd",
        "slurm",
        "kubernetes",
        "kubernetes_mcad",
        "aws_batch",
        "aws_sagemaker",
        "gcp_batch",
        "ray",
        "lsf",
    }
)
# The ``[PREFIX:NAME]`` sections; a misspelt prefix is refused with the section meant.
SECTION_PREFIXES = (COMPONENT_PREFIX, CLI_PREFIX, TRACKER_PREFIX)
# A config file holds a few dozen lines; a larger one is refused before it is read whole,
# so that a file pointed at by mistake (a log, a dataset) cannot fill memory.
MAX_CONFIG_FILE_BYTES = 1 << 20
# Options of 0.7's ``torchx run`` that it took from the command line only, so its
# ``[cli:run]`` ignored them: a 0.7 file holding one is warned, never refused, even where the
# name is near a key read here (``scheduler_args`` and ``scheduler``).
UPSTREAM_RUN_FLAGS = frozenset({"scheduler_args", "parent_run_id"})
CLI_KEYS: dict[str, frozenset[str]] = {
    "run": frozenset({"scheduler", "workspace", "component", "dryrun", "wait", "log"}),
    # retention: how long local apps' records and logs are kept (``torchx list --prune``)
    "list": frozenset({"retention", "limit"}),
}


class ConfigError(SpecsError):
    """A bad config file or entry in one: names the file, and the line or the section and
    key, in one line. The Runner reads the files by itself, so a Python program meets this
    for a file it never named: the message says which one to fix."""

    def __init__(
        self,
        file: str,
        section: str,
        key: str,
        value: object,
        expected: str,
        line: int | None = None,
    ) -> None:
        self.file, self.section, self.key, self.line = file, section, key, line
        super().__init__(self.field_of(file, section, key, line), value, expected)

    @staticmethod
    def field_of(file: str, section: str, key: str, line: int | None = None) -> str:
        """How an error names a config file's entry: ``/p/.torchxconfig [section] key``,
        or ``/p/.torchxconfig line 3`` for a line that is no entry."""
        # a whole section at fault (key ""), or the whole file (section ""): the field
        # ends at what is at fault
        where = [
            file,
            f"line {line}" if line is not None else "",
            f"[{section}]" if section else "",
        ]
        return " ".join(part for part in [*where, key] if part)


# Shown as torchx.runner.ConfigError, where programs import it from, in a traceback.
ConfigError.__module__ = "torchx.runner"


class ConfigFileNotFoundError(SpecsError, FileNotFoundError):
    """``$TORCHXCONFIG`` names no file. Also a ``FileNotFoundError``, which 0.7 raised."""


@dataclass
class TorchxConfig:
    """The merged contents of the config files, remembering where each value came from."""

    files: list[Path] = field(default_factory=list)
    # section -> key -> (value, file it came from)
    sections: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)

    def _section(self, name: str) -> dict[str, tuple[str, str]]:
        return self.sections.get(name, {})

    def scheduler_cfg(self, scheduler: str, opts: runopts) -> dict[str, CfgVal]:
        """Typed run options for ``scheduler`` from its section; unknown keys are errors."""
        out: dict[str, CfgVal] = {}
        for key, (value, origin) in self._section(scheduler).items():
            if is_unset(value):
                continue
            if key not in opts:
                known = [name for name, _ in opts]
                hint = closest(key, known) if known else f"{scheduler} takes no run options"
                raise ConfigError(
                    origin, scheduler, key, value, f"not a run option of {scheduler}; {hint}"
                )
            try:
                parsed = opts.value_from_str(key, value)
            except SpecsError as e:
                raise ConfigError(origin, scheduler, key, value, e.expected) from None
            out[key] = parsed
        return out

    def component_defaults(self, component: str) -> dict[str, tuple[str, str]]:
        """``{argument: (value, file)}`` from ``[component:NAME]``."""
        return dict(self._section(COMPONENT_PREFIX + component))

    def trackers(self) -> dict[str, tuple[str, str | None]]:
        """``{name: (factory, config)}`` from ``[torchx:tracker]`` and ``[tracker:NAME]``."""
        return {
            name: (factory or name, self._section(TRACKER_PREFIX + name).get("config", (None,))[0])
            for name, (factory, _) in self._section(TRACKERS_SECTION).items()
        }

    def cli_defaults(self, command: str) -> dict[str, str]:
        """Defaults for ``torchx COMMAND`` options from ``[cli:COMMAND]``.

        A near miss of a key the command reads is a ``ConfigError`` suggesting it: left out,
        ``schedular`` or ``dryrn`` would silently run elsewhere, or for real. Any other key
        is left out with a warning, since pytorch/torchx 0.7 ignored the keys it did not read
        and a 0.7 file holding one still works; only the command reading the section warns.
        """
        known = CLI_KEYS.get(command, frozenset())
        section = CLI_PREFIX + command
        out: dict[str, str] = {}
        for key, (value, origin) in self._section(section).items():
            if key in known:
                out[key] = value
                continue
            if command == "run" and key in UPSTREAM_RUN_FLAGS:
                hint = f"give --{key} on the command line"
            elif not known:
                hint = "it reads none"
            else:
                names = sorted(known)
                hint = closest(key, names)
                if close_matches(key, names):
                    raise ConfigError(
                        origin, section, key, value, f"not a setting of torchx {command}; {hint}"
                    )
            _warn_once(
                f"torchx: {origin} [{section}] {key}: ignored, not a setting of "
                f"torchx {command}; {hint}"
            )
        return out

    def cli_default_error(self, command: str, key: str, expected: str) -> ConfigError:
        """The error for the value of ``[cli:COMMAND] KEY`` (one ``cli_defaults`` gave)
        that the command cannot use, naming the file to fix: the user did not type it."""
        section = CLI_PREFIX + command
        value, origin = self._section(section)[key]
        return ConfigError(origin, section, key, value, expected)


# What pytorch/torchx 0.7's ``torchx configure`` writes for an option with no value: the
# word None, or a ``#FIXME:(type) help`` placeholder for a required one. Both mean unset.
UNSET = "None"
PLACEHOLDER_PREFIX = "#FIXME"


def is_unset(value: str) -> bool:
    """Whether a config value stands for "not set" (see ``UNSET``)."""
    text = value.strip()
    return text == UNSET or text.startswith(PLACEHOLDER_PREFIX)


def config_files(cwd: str | os.PathLike[str] | None = None) -> list[Path]:
    """The config files that apply, lowest precedence first."""
    env = os.environ.get(CONFIG_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            what = "a directory" if path.is_dir() else "no such file"
            raise ConfigFileNotFoundError(
                CONFIG_ENV, env, f"{what}; point it at a .torchxconfig file"
            )
        return [path]
    candidates = [Path.home() / CONFIG_FILE, Path(cwd or os.getcwd()) / CONFIG_FILE]
    seen: list[Path] = []
    for p in candidates:
        if p.is_file() and p.resolve() not in [s.resolve() for s in seen]:
            seen.append(p)
    return seen


def _read_config_text(path: Path) -> str:
    """``path``'s text, read as UTF-8 with or without a byte-order mark (an editor may write
    one); a file over ``MAX_CONFIG_FILE_BYTES`` or not UTF-8 is refused in one line."""
    with path.open("rb") as f:
        data = f.read(MAX_CONFIG_FILE_BYTES + 1)
    if len(data) > MAX_CONFIG_FILE_BYTES:
        raise ConfigError(
            str(path),
            "",
            "",
            path.name,
            f"over {MAX_CONFIG_FILE_BYTES} bytes (MAX_CONFIG_FILE_BYTES), far more than a"
            " .torchxconfig holds; point at the INI file of run options",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(
            str(path),
            "",
            "",
            path.name,
            f"not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8",
        ) from None


def _not_ini(path: Path, text: str, error: Exception) -> ConfigError:
    """One line for a file configparser refused: the line it stopped at, and the fix."""
    import configparser

    lineno: int | None = getattr(error, "lineno", None)
    if isinstance(error, configparser.MissingSectionHeaderError):
        why = (
            "a line outside any section; start the file with a [SECTION] header such as "
            "[local_cwd], each header on its own line and closed by ]"
        )
    elif isinstance(error, configparser.DuplicateOptionError):
        why = f"{error.option!r} is set twice in [{error.section}]; keep it once"
    elif isinstance(error, configparser.DuplicateSectionError):
        why = f"[{error.section}] appears twice; merge them, so that each section is written once"
    elif isinstance(error, configparser.ParsingError) and error.errors:
        lineno = error.errors[0][0]
        why = "neither a [SECTION] header nor an option; write it as key = value"
    else:
        why = f"not a valid INI file ({' '.join(str(error).split())}); fix it or remove it"
    if lineno is None:
        return ConfigError(str(path), "", "", path.name, why)
    lines = text.splitlines()
    line = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
    return ConfigError(str(path), "", "", line, why, line=lineno)


def load_config(
    files: Iterable[str | os.PathLike[str]] | None = None,
    known_schedulers: Iterable[str] = (),
) -> TorchxConfig:
    """Read and merge ``files`` (default: ``config_files()``), checking section names.

    A near miss of a section torchx reads (``[lcoal_cwd]``, ``[compnent:NAME]``) is an
    error naming the section meant. What 0.7 files may hold that this installation cannot
    use is skipped with a warning (see ``_skip_reason``).
    """
    paths = [Path(f) for f in files] if files is not None else config_files()
    # Asked by name (``in``), never listed unless a section names no scheduler of them:
    # listing the registry's schedulers scans installed packages, a lookup of a built-in
    # name does not.
    known = known_schedulers if isinstance(known_schedulers, Collection) else [*known_schedulers]
    config = TorchxConfig(files=paths)
    if paths:
        import configparser  # only when a file exists: most runs have none
    for path in paths:
        parser = configparser.ConfigParser(interpolation=None, default_section="\0none")
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        text = _read_config_text(path)
        try:
            parser.read_string(text, source=str(path))
        except configparser.Error as e:
            raise _not_ini(path, text, e) from None
        # why -> the sections skipped for it, so that one reason is one line
        skipped: dict[str, list[str]] = {}
        for section in parser.sections():
            why = _skip_reason(str(path), section, parser[section], known)
            if why:
                skipped.setdefault(why, []).append(section)
                continue
            target = config.sections.setdefault(section, {})
            for key, value in parser[section].items():
                target[key] = (value, str(path))
        for why, sections in skipped.items():
            listed = ", ".join(f"[{s}]" for s in sections)
            _warn_once(f"torchx: {path}: skipping {listed}: {why}")
    return config


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """Log ``message`` as a warning the first time this process sees it: a command may
    read the config files more than once, and one line per mistake is enough."""
    if message in _warned:
        return
    _warned.add(message)
    import logging

    logging.getLogger("torchx.runner").warning("%s", message)


def _check_tracker_section(origin: str, section: str, values: Mapping[str, str]) -> None:
    """``[torchx:tracker]`` holds ``NAME=FACTORY`` lines; ``[tracker:NAME]`` holds ``config``."""
    if section == TRACKERS_SECTION:
        for name, factory in values.items():
            if not TRACKER_NAME.match(name):
                raise ConfigError(origin, section, name, factory, TRACKER_NAME_RULE)
        return
    if not TRACKER_NAME.match(section[len(TRACKER_PREFIX) :]):
        raise ConfigError(origin, section, "", section, TRACKER_NAME_RULE)


def get_configured_trackers(config: TorchxConfig | None = None) -> dict[str, str | None]:
    """``{tracker name: config}`` as the launcher sees it (config files, then environment)."""
    env = trackers_env((config or load_config()).trackers())
    names = [n for n in env.get(ENV_TORCHX_TRACKERS, "").split(",") if n]
    return {name: env.get(tracker_config_env_var_name(name)) for name in names}


# Why a scheduler section is skipped; one line lists every such section of a file.
NOT_INSTALLED = "no such scheduler is installed here"


def _skip_reason(
    origin: str, section: str, values: Mapping[str, str], known: Collection[str]
) -> str:
    """Refuse a bad section; else why it is skipped ("" to apply it).

    Skipped are the sections a 0.7 file may hold that this installation cannot use, as 0.7
    ignored them: a scheduler not installed here, ``[cli:COMMAND]`` of a command that reads
    none (unless COMMAND is a near miss of one that does: refused), and a component's name
    without ``component:`` (the reason says where it goes).
    """
    if section == TRACKERS_SECTION or section.startswith(TRACKER_PREFIX):
        _check_tracker_section(origin, section, values)
        return ""
    if section.startswith(COMPONENT_PREFIX):
        if not section[len(COMPONENT_PREFIX) :]:
            raise ConfigError(origin, section, "", section, "name the component: [component:NAME]")
        return ""
    if section.startswith(CLI_PREFIX):
        command = section[len(CLI_PREFIX) :]
        if command in CLI_KEYS:
            return ""  # its unknown keys are reported by ``cli_defaults``, when read
        command_meant = close_matches(command, list(CLI_KEYS), n=1)
        if command_meant:
            # skipping it would drop what it sets: [cli:rnu] dryrun = true would launch
            raise ConfigError(
                origin,
                section,
                "",
                section,
                f"no such section; did you mean [{CLI_PREFIX}{command_meant[0]}]?",
            )
        sections = " and ".join(f"[{CLI_PREFIX}{c}]" for c in sorted(CLI_KEYS))
        return f"no torchx command reads it; torchx reads {sections}"
    prefix, colon, name = section.partition(":")
    # ``file.py:fn`` is a component's name, whatever its first letters look like
    meant = (
        _section_meant(prefix, name, section)
        if colon and not any(c in prefix for c in "./")
        else None
    )
    if meant and _is_read(meant):
        # skipping it would drop what it sets, and run something else than was written
        raise ConfigError(origin, section, "", section, f"no such section; did you mean [{meant}]?")
    if meant:
        # maybe a section of the user's own (0.7 read any [PREFIX:NAME]): nothing here reads it
        return f"not a section torchx reads; did you mean [{meant}]?"
    if colon or "." in section or "/" in section:
        # a component's name (``dist.ddp``, ``file.py:fn``): scheduler names have none of these
        return (
            f"not a scheduler; defaults for component {section} go under "
            f"[{COMPONENT_PREFIX}{section}]"
        )
    if section in known:
        return ""
    names = list(known)  # only now: a section that names none of them
    if not names:
        return ""
    near = closest(section, names)
    if section not in UPSTREAM_SCHEDULERS and near.startswith("did you mean"):
        # a misspelt scheduler of this installation: skipping it would drop its options
        raise ConfigError(origin, section, "", section, f"not a scheduler; {near}")
    return NOT_INSTALLED


def _section_meant(prefix: str, name: str, section: str) -> str | None:
    """The section that ``section`` (``[PREFIX:NAME]`` with an unknown PREFIX) misspells:
    ``[torchx:tracker]``, or NAME under the known prefix closest to PREFIX."""
    if close_matches(section, [TRACKERS_SECTION]):
        return TRACKERS_SECTION
    near = close_matches(prefix + ":", list(SECTION_PREFIXES), n=1)
    return near[0] + name if near else None


def _is_read(section: str) -> bool:
    """Whether torchx reads ``section`` whatever else the files hold: a component's
    defaults, a command's ``[cli:COMMAND]``, the trackers."""
    return (
        section.startswith(COMPONENT_PREFIX)
        or section == TRACKERS_SECTION
        or (section.startswith(CLI_PREFIX) and section[len(CLI_PREFIX) :] in CLI_KEYS)
    )
