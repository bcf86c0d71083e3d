from __future__ import annotations

import pytest

from torchx.specs import (
    AppState,
    AppStatus,
    AppStatusError,
    ReplicaStatus,
    RoleStatus,
    is_terminal,
)

from .statuses import failed_trainer


def test_terminal_states() -> None:
    assert {s for s in AppState if is_terminal(s)} == {
        AppState.SUCCEEDED,
        AppState.FAILED,
        AppState.CANCELLED,
    }
    assert str(AppState.RUNNING) == "RUNNING"


def test_raise_for_status() -> None:
    AppStatus(AppState.SUCCEEDED).raise_for_status()
    # as in pytorch/torchx: anything but SUCCEEDED raises, a running app included
    for state in AppState:
        if state != AppState.SUCCEEDED:
            with pytest.raises(AppStatusError):
                AppStatus(state).raise_for_status()
    failed = AppStatus(AppState.FAILED, roles=[failed_trainer(3, "Traceback...\nValueError: boom")])
    with pytest.raises(AppStatusError) as e:
        failed.raise_for_status()
    text = str(e.value)
    assert "State: FAILED" in text
    assert " trainer[1]:FAILED (exitcode: 3)" in text
    assert "ValueError: boom" in text
    assert e.value.status is failed


def test_format_is_readable() -> None:
    s = AppStatus(AppState.RUNNING, num_restarts=2, msg="ok", ui_url="http://127.0.0.1:1/x")
    assert s.format().splitlines() == [
        "AppStatus:",
        "    State: RUNNING",
        "    Num Restarts: 2",
        "    Roles: ",
        "    Msg: ok",
        "    Structured Error Msg: <NONE>",
        "    UI URL: http://127.0.0.1:1/x",
    ]


def test_format_shows_the_error_once_and_each_replica_on_one_line() -> None:
    tb = "Traceback (most recent call last):\nValueError: boom"
    failed = AppStatus(
        AppState.FAILED,
        num_restarts=2,
        roles=[
            RoleStatus(
                "trainer",
                [
                    ReplicaStatus(
                        0,
                        AppState.FAILED,
                        "trainer",
                        exit_code=1,
                        attempt=3,
                        structured_error_msg=tb,
                    ),
                    ReplicaStatus(
                        1, AppState.FAILED, "trainer", exit_code=1, structured_error_msg=tb
                    ),
                ],
            )
        ],
    )
    text = failed.format()
    assert text.count("ValueError: boom") == 1
    lines = text.splitlines()
    assert " *trainer[0]:FAILED (exitcode: 1) attempt=3" in lines
    assert "  trainer[1]:FAILED (exitcode: 1)" in lines
    assert "    Structured Error Msg: trainer[0]: Traceback (most recent call last):" in lines
    # the app's own error, when it has one, is the one shown
    failed.structured_error_msg = "the app's error"
    assert "ValueError" not in failed.format()
    assert "    Structured Error Msg: the app's error" in failed.format().splitlines()
