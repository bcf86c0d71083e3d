"""torchx.runner.events: every Runner call is recorded as a TorchxEvent."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from torchx.runner import get_runner
from torchx.runner.events import LOGGER_NAME, SourceType, TorchxEvent, log_event, record
from torchx.runner.events.handlers import get_logging_handler
from torchx.specs import AppDef, Role, SpecsError


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[TorchxEvent] = []

    def emit(self, rec: logging.LogRecord) -> None:
        self.events.append(TorchxEvent.deserialize(rec.getMessage()))


@pytest.fixture
def events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[TorchxEvent]]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    handler = _Collect()
    logger = logging.getLogger(LOGGER_NAME)
    logger.addHandler(handler)
    try:
        yield handler.events
    finally:
        logger.removeHandler(handler)


def test_event_json_round_trip() -> None:
    ev = TorchxEvent("s", "local_cwd", "schedule", app_id="a", source=SourceType.EXTERNAL)
    data = json.loads(ev.serialize())
    assert data["source"] == "EXTERNAL" and data["api"] == "schedule"
    assert TorchxEvent.deserialize(ev.serialize()) == ev
    assert TorchxEvent.deserialize(ev) is ev
    # Keys from a newer writer are ignored; an unknown source reads as UNKNOWN.
    newer = json.dumps({**data, "source": "LATER", "extra": 1})
    assert TorchxEvent.deserialize(newer).source is SourceType.UNKNOWN
    with pytest.raises(SpecsError, match="session"):
        TorchxEvent.deserialize("{}")
    with pytest.raises(SpecsError, match="JSON"):
        TorchxEvent.deserialize("not json")


def test_log_event_records_time_and_errors(events: list[TorchxEvent]) -> None:
    with log_event("custom", "local_cwd", "app-1", session="s") as ev:
        ev.event.app_image = "img"
    with pytest.raises(ZeroDivisionError), log_event("failing"):
        1 / 0  # noqa: B018
    ok, failed = events
    assert (ok.api, ok.scheduler, ok.app_id, ok.app_image, ok.session) == (
        "custom",
        "local_cwd",
        "app-1",
        "img",
        "s",
    )
    assert ok.wall_time_usec is not None and ok.start_epoch_time_usec is not None
    assert ok.raw_exception is None
    assert failed.raw_exception is not None and "ZeroDivisionError" in failed.raw_exception
    record(TorchxEvent("s", "x", "direct"))
    assert events[-1].api == "direct"


def test_handlers() -> None:
    assert isinstance(get_logging_handler(), logging.NullHandler)
    assert isinstance(get_logging_handler("console"), logging.StreamHandler)
    with pytest.raises(SpecsError, match="consol"):
        get_logging_handler("consol")


def test_the_runner_records_its_calls(events: list[TorchxEvent], tmp_path: Path) -> None:
    app = AppDef("ev", [Role("r", image=str(tmp_path), entrypoint="true")])
    with get_runner("sess") as runner:
        handle = runner.run(app, "local_cwd")
        runner.wait(handle, wait_interval=0.1)
        runner.status(handle)
        with pytest.raises(SpecsError):
            runner.dryrun(AppDef("bad", []), "local_cwd")
    apis = [e.api for e in events]
    assert apis[:5] == ["dryrun", "schedule", "wait", "status", "dryrun"]
    app_id = handle.rsplit("/", 1)[1]
    assert [e.app_id for e in events[1:4]] == [app_id] * 3
    assert all(e.session == "sess" and e.scheduler == "local_cwd" for e in events)
    assert events[4].raw_exception is not None and "AppDefError" in events[4].raw_exception


def test_compat_paths() -> None:
    from torchx.runner import api, config

    assert api.log_event is log_event
    assert api.ENV_TORCHX_JOB_ID == "TORCHX_JOB_ID"
    assert "local_cwd" in config.get_scheduler_factories()
    assert len(config.DEFAULT_CONFIG_DIRS) == 2  # the home directory, then the current one


def test_default_config_dirs_can_be_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchx.runner import config

    (tmp_path / ".torchxconfig").write_text("[cli:run]\ncomponent = utils.echo\n")
    monkeypatch.delenv("TORCHXCONFIG", raising=False)
    monkeypatch.setattr(config, "DEFAULT_CONFIG_DIRS", [str(tmp_path)])
    assert config.get_configs("cli", "run") == {"component": "utils.echo"}
