""".torchxconfig: where it is found, what it may hold, and how it ranks."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from torchx.runner import ConfigError, config_files, get_runner, load_config
from torchx.specs import AppDef, AppState, Role, SpecsError

APP = AppDef("cfg", [Role("r", image="", entrypoint="true")])


def test_run_options_from_the_file_and_explicit_ones_win(tmp_path: Path) -> None:
    Path(".torchxconfig").write_text(
        f"[local_cwd]\nlog_dir = {tmp_path / 'from-file'}\ncancel_grace_seconds = 1.5\n"
    )
    with get_runner() as runner:
        info = runner.dryrun(APP)
        assert info.request.app_dir.startswith(str(tmp_path / "from-file"))
        assert info.cfg["cancel_grace_seconds"] == 1.5
        info = runner.dryrun(APP, cfg={"log_dir": str(tmp_path / "explicit")})
        assert info.request.app_dir.startswith(str(tmp_path / "explicit"))
        # code default when neither says anything
        assert info.cfg["auto_set_cuda_visible_devices"] is False
        handle = runner.run(APP)
        status = runner.wait(handle)
        assert status is not None and status.state == AppState.SUCCEEDED
    assert (tmp_path / "from-file").is_dir()


def test_home_then_cwd_then_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path.home() / ".torchxconfig"
    home.write_text("[local_cwd]\nlog_dir = /home-logs\ncwd = /\n")
    Path(".torchxconfig").write_text("[local_cwd]\nlog_dir = /cwd-logs\n")
    assert config_files() == [home, Path.cwd() / ".torchxconfig"]
    cfg = get_runner().config
    assert cfg.sections["local_cwd"]["log_dir"][0] == "/cwd-logs"
    assert cfg.sections["local_cwd"]["cwd"][0] == "/"
    only = tmp_path / "only.ini"
    only.write_text("[local_cwd]\nlog_dir = /env-logs\n")
    monkeypatch.setenv("TORCHXCONFIG", str(only))
    assert config_files() == [only]
    assert "cwd" not in get_runner().config.sections["local_cwd"]
    monkeypatch.setenv("TORCHXCONFIG", str(tmp_path / "missing.ini"))
    with pytest.raises(SpecsError, match="TORCHXCONFIG"):
        config_files()


def test_unknown_key_names_file_section_and_key() -> None:
    Path(".torchxconfig").write_text("[local_cwd]\nlogdir = /x\n")
    with get_runner() as runner, pytest.raises(ConfigError) as e:
        runner.dryrun(APP)
    msg = str(e.value)
    assert ".torchxconfig [local_cwd] logdir" in msg and "did you mean 'log_dir'" in msg


def test_ill_typed_value_names_file_section_and_key() -> None:
    Path(".torchxconfig").write_text("[local_cwd]\ncancel_grace_seconds = soon\n")
    with get_runner() as runner, pytest.raises(ConfigError) as e:
        runner.dryrun(APP)
    assert "[local_cwd] cancel_grace_seconds" in str(e.value)
    assert "soon" in str(e.value) and "float" in str(e.value)


def test_unknown_section_and_cli_keys(tmp_path: Path) -> None:
    bad = tmp_path / "a.ini"
    bad.write_text("[lcoal_cwd]\nlog_dir = /x\n")
    with pytest.raises(ConfigError) as e:
        load_config([bad], known_schedulers=["local_cwd"])
    assert str(e.value) == (
        f"{bad} [lcoal_cwd]: got 'lcoal_cwd'; not a scheduler; did you mean 'local_cwd'?"
    )
    cli = tmp_path / "b.ini"
    cli.write_text("[cli:run]\nscheduler = local_cwd\ncomponent = utils.echo\n")
    assert load_config([cli]).cli_defaults("run") == {
        "scheduler": "local_cwd",
        "component": "utils.echo",
    }
    broken = tmp_path / "c.ini"
    broken.write_text("no section header\n")
    with pytest.raises(SpecsError, match=r"c\.ini line 1: got 'no section header'; a line outside"):
        load_config([broken])


def test_reserved_scheduler_sections_are_accepted() -> None:
    Path(".torchxconfig").write_text("[slurm]\npartition = gpu\n")
    assert get_runner().config.sections["slurm"]["partition"][0] == "gpu"


def test_non_utf8_config_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / ".torchxconfig"
    bad.write_bytes(b"[local_cwd]\nlog_dir = /tmp/\xff\xfe\n")
    with pytest.raises(SpecsError) as e:
        load_config([bad], known_schedulers=["local_cwd"])
    assert str(bad) in str(e.value)
    assert "UTF-8" in str(e.value)


def test_a_config_over_the_size_cap_is_refused_in_one_line_before_it_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchx.runner import _config

    monkeypatch.setattr(_config, "MAX_CONFIG_FILE_BYTES", 64)
    path = tmp_path / ".torchxconfig"
    at_cap = "\ufeff[local_cwd]\nlog_dir = /tmp/x\n".encode()
    path.write_bytes(at_cap + b"#" * (64 - len(at_cap) - 1) + b"\n")
    assert load_config([path], ["local_cwd"]).sections["local_cwd"]["log_dir"][0] == "/tmp/x"
    path.write_bytes(path.read_bytes() + b"\n")
    with pytest.raises(SpecsError) as e:
        load_config([path], ["local_cwd"])
    text = str(e.value)
    assert "\n" not in text and str(path) in text, text
    assert "over 64 bytes (MAX_CONFIG_FILE_BYTES)" in text, text


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize(
    ("text", "command", "read", "warning"),
    [
        (
            "[cli:run]\nhosts = a,b\ncomponent = utils.echo\n",
            "run",
            {"component": "utils.echo"},
            " [cli:run] hosts: ignored, not a setting of torchx run; known: component, dryrun,"
            " log, scheduler, wait, workspace",
        ),
        (
            # 0.7's run options it read from the command line alone, near a key or not
            "[cli:run]\nscheduler_args = log_dir=/x\n",
            "run",
            {},
            " [cli:run] scheduler_args: ignored, not a setting of torchx run; give"
            " --scheduler_args on the command line",
        ),
        (
            "[cli:status]\nlimit = 3\n",
            "status",
            {},
            ": skipping [cli:status]: no torchx command reads it; torchx reads [cli:list] and"
            " [cli:run]",
        ),
    ],
)
def test_what_0_7_ignored_in_cli_sections_warns_once_with_a_suggestion(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    text: str,
    command: str,
    read: dict[str, str],
    warning: str,
) -> None:
    # 0.7 read [cli:COMMAND] for the options it knew and ignored the rest: such a file
    # still loads, and the misspelt name gets its closest match, once per process
    ini = tmp_path / "cli.ini"
    ini.write_text(text)
    with caplog.at_level(logging.WARNING):
        config = load_config([ini])
        assert config.cli_defaults(command) == read
        assert config.cli_defaults(command) == read
    assert _warnings(caplog) == [f"torchx: {ini}{warning}"]
    # "skipping" means skipped: nothing of such a section is kept
    assert all(s in ("cli:run", "cli:list") for s in config.sections)


@pytest.mark.parametrize(
    ("key", "value", "meant"),
    [
        ("schedular", "local_docker", "scheduler"),
        ("dryrn", "true", "dryrun"),
        ("workspce", "/src", "workspace"),
        ("compnent", "dist.ddp", "component"),
    ],
)
def test_a_near_miss_of_a_cli_run_key_stops_naming_the_fix(
    tmp_path: Path, key: str, value: str, meant: str
) -> None:
    # left out, it would launch elsewhere, or for real where a dry run was written
    ini = tmp_path / "cli.ini"
    ini.write_text(f"[cli:run]\n{key} = {value}\n")
    config = load_config([ini])
    with pytest.raises(ConfigError) as e:
        config.cli_defaults("run")
    assert str(e.value) == (
        f"{ini} [cli:run] {key}: got {value!r}; not a setting of torchx run; "
        f"did you mean {meant!r}?"
    )


@pytest.mark.parametrize(
    ("section", "meant"),
    [
        ("compnent:utils.echo", "component:utils.echo"),
        ("components:dist.ddp", "component:dist.ddp"),
        ("clli:run", "cli:run"),
        ("torchx:trackers", "torchx:tracker"),
        # a command one typo from one that reads its section: [cli:rnu] dryrun = true
        # skipped would launch for real
        ("cli:rnu", "cli:run"),
        ("cli:lsit", "cli:list"),
    ],
)
def test_a_misspelt_section_name_stops_naming_the_whole_section(
    tmp_path: Path, section: str, meant: str
) -> None:
    ini = tmp_path / "typo.ini"
    ini.write_text(f"[{section}]\nmsg = x\n")
    with pytest.raises(ConfigError) as e:
        load_config([ini], known_schedulers=["local_cwd"])
    assert str(e.value) == (
        f"{ini} [{section}]: got {section!r}; no such section; did you mean [{meant}]?"
    )


def test_a_section_named_like_a_component_says_where_its_defaults_go(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ini = tmp_path / "guess.ini"
    ini.write_text(
        "[dist.ddp]\nj = 1x1\n[aws_batch]\nqueue = q\n[client:foo]\nx = 1\n"
        "[local_cwd]\nlog_dir = /x\n"
    )
    with caplog.at_level(logging.WARNING):
        config = load_config([ini], known_schedulers=["local_cwd"])
    assert _warnings(caplog) == [
        f"torchx: {ini}: skipping [dist.ddp]: not a scheduler; defaults for component "
        "dist.ddp go under [component:dist.ddp]",
        f"torchx: {ini}: skipping [aws_batch]: no such scheduler is installed here",
        # maybe the user's own section (0.7 read any [PREFIX:NAME]); no command reads [cli:foo]
        f"torchx: {ini}: skipping [client:foo]: not a section torchx reads; did you mean "
        "[cli:foo]?",
    ]
    # skipped, as 0.7 ignored them; the file's other sections still apply
    assert list(config.sections) == ["local_cwd"] and config.component_defaults("dist.ddp") == {}
    assert config.sections["local_cwd"]["log_dir"][0] == "/x"


@pytest.mark.parametrize(
    ("text", "line", "got", "fix"),
    [
        ("log_dir = /x\n[local_cwd]\n", 1, "log_dir = /x", "[SECTION]"),
        ("[local_cwd\nlog_dir = /x\n", 1, "[local_cwd", "[SECTION]"),
        ("[local_cwd]\nlog_dir\n", 2, "log_dir", "key = value"),
        ("[local_cwd]\nlog_dir = /a\nlog_dir = /b\n", 3, "log_dir = /b", "once"),
        ("[local_cwd]\n[local_cwd]\n", 2, "[local_cwd]", "once"),
    ],
)
def test_a_config_that_is_not_ini_gets_one_line_naming_its_line_and_the_fix(
    tmp_path: Path, text: str, line: int, got: str, fix: str
) -> None:
    bad = tmp_path / ".torchxconfig"
    bad.write_text(text)
    with pytest.raises(SpecsError) as e:
        load_config([bad], known_schedulers=["local_cwd"])
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(f"{bad} line {line}: got {got!r}; "), message
    assert fix in message


class _Registry(Mapping[str, object]):
    """Schedulers looked up by name; ``listed`` counts the listings of every name (what
    scans installed packages in the real registry)."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.listed = 0

    def __getitem__(self, name: str) -> object:
        return object()

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[str]:
        self.listed += 1
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def test_sections_of_known_schedulers_are_read_without_listing_every_scheduler(
    tmp_path: Path,
) -> None:
    ini = tmp_path / "ok.ini"
    ini.write_text("[local_cwd]\nlog_dir = /x\n[cli:run]\ncomponent = utils.echo\n")
    registry = _Registry(["local_cwd", "slurm"])
    config = load_config([ini], known_schedulers=registry)
    assert config.cli_defaults("run") == {"component": "utils.echo"}
    assert registry.listed == 0
    # a section that names no scheduler of them is where the names are listed, for the hint
    ini.write_text("[slurn]\npartition = p\n")
    with pytest.raises(ConfigError, match=r"did you mean 'slurm'"):
        load_config([ini], known_schedulers=registry)
    assert registry.listed == 1


def test_a_cli_default_the_command_cannot_use_is_refused_naming_its_file(tmp_path: Path) -> None:
    ini = tmp_path / "run.ini"
    ini.write_text("[cli:run]\nscheduler = slurmm\n")
    config = load_config([ini])
    assert config.cli_defaults("run") == {"scheduler": "slurmm"}
    e = config.cli_default_error("run", "scheduler", "did you mean 'slurm'?")
    assert isinstance(e, ConfigError)
    assert str(e) == f"{ini} [cli:run] scheduler: got 'slurmm'; did you mean 'slurm'?"
