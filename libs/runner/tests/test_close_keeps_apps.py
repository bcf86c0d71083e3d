"""Leaving ``with get_runner()`` leaves local apps running (they are detached, unlike 0.7's),
and MIGRATING.md tells a 0.7 user so, with what to write instead."""

from __future__ import annotations

from pathlib import Path

from torchx.runner import get_runner
from torchx.specs import AppDef, AppState, Role


def _migrating_bullet(marker: str) -> str:
    text = (Path(__file__).resolve().parents[3] / "MIGRATING.md").read_text()
    return " ".join(next(b for b in text.split("\n- ") if marker in b).split())


def test_an_app_outlives_the_with_block_and_cancel_in_finally_ends_it() -> None:
    app = AppDef("outlive", [Role("r", image="", entrypoint="sleep", args=["300"])])
    with get_runner() as runner:
        handle = runner.run(app, "local_cwd")
    later = get_runner()
    try:
        status = later.status(handle)
        assert status is not None and status.state in (AppState.PENDING, AppState.RUNNING)
    finally:  # what MIGRATING.md says to write
        later.cancel(handle)
    status = later.wait(handle, wait_interval=0.05, timeout=60)
    assert status is not None and status.state == AppState.CANCELLED


def test_migrating_says_close_keeps_apps_running_and_what_to_write_instead() -> None:
    bullet = _migrating_bullet("`runner.close()`")
    assert "does not stop local apps" in bullet
    assert "`finally`" in bullet and "runner.cancel(handle)" in bullet
    assert "runner.wait(handle)" in bullet
    for doc in (get_runner().close.__doc__, get_runner().__exit__.__doc__):
        assert doc is not None and "keep running" in doc
