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
    failed = AppStatus(
        AppState.FAILED,
        roles=[
            RoleStatus(
                "trainer",
                [
                    ReplicaStatus(0, AppState.SUCCEEDED, "trainer", exit_code=0),
                    ReplicaStatus(
                        1,
                        AppState.FAILED,
                        "trainer",
                        exit_code=3,
                        structured_error_msg="Traceback...\nValueError: boom",
                    ),
                ],
            )
        ],
    )
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
