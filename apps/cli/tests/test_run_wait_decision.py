"""Whether ``torchx run`` waits for the app and streams its log, from its flags and
``[cli:run]`` (pytorch/torchx 0.7's behaviour: ``--log`` alone makes a remote run wait)."""

from __future__ import annotations

import pytest

from torchx.cli._run import wait_and_stream
from torchx.cli._run_setup import RunSetup
from torchx.runner import ConfigError, TorchxConfig

REMOTE, LOCAL = False, True
FILE = "/home/me/.torchxconfig"


def cli_run(values: dict[str, str]) -> RunSetup:
    """The setup of a run whose config has a [cli:run] section of ``values``, from FILE."""
    setup = RunSetup(make_runner=lambda _: pytest.fail("no runner is needed"))
    setup.config = TorchxConfig(sections={"cli:run": {k: (v, FILE) for k, v in values.items()}})
    return setup


@pytest.mark.parametrize(
    ("wait", "log", "json_out", "local", "config", "expected"),
    [
        # a remote scheduler: submit and return, unless the log is asked for
        (None, None, False, REMOTE, {}, (False, False)),
        (None, True, False, REMOTE, {}, (True, True)),
        (False, True, False, REMOTE, {}, (False, False)),  # --no-wait wins over --log
        (None, None, False, REMOTE, {"log": "true"}, (True, True)),  # as 0.7's config did
        (None, None, False, REMOTE, {"wait": "true"}, (True, True)),
        (None, None, False, REMOTE, {"wait": "true", "log": "false"}, (True, False)),
        (True, False, False, REMOTE, {}, (True, False)),
        # a local scheduler: wait and stream by default
        (None, None, False, LOCAL, {}, (True, True)),
        (False, None, False, LOCAL, {}, (False, False)),
        (None, False, False, LOCAL, {}, (True, False)),
        (None, None, False, LOCAL, {"wait": "false"}, (False, False)),
        # --json waits but keeps stdout for the result alone
        (None, None, True, LOCAL, {}, (True, False)),
        (None, True, True, REMOTE, {}, (True, False)),
    ],
)
def test_run_waits_and_streams_as_its_flags_and_config_say(
    wait: bool | None,
    log: bool | None,
    json_out: bool,
    local: bool,
    config: dict[str, str],
    expected: tuple[bool, bool],
) -> None:
    assert wait_and_stream(wait, log, json_out, local, cli_run(config)) == expected


def test_a_config_value_that_is_no_boolean_is_named_with_its_file() -> None:
    with pytest.raises(ConfigError) as info:
        wait_and_stream(None, None, False, REMOTE, cli_run({"log": "sometimes"}))
    assert str(info.value) == f"{FILE} [cli:run] log: got 'sometimes'; expected true or false"
