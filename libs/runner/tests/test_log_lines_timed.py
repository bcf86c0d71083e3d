"""``Runner.log_lines_timed`` (``torchx log --timestamps``) on a scheduler that keeps no
time for its log lines: refused, naming the scheduler."""

from __future__ import annotations

from typing import Any

import pytest

from torchx.runner import Runner
from torchx.schedulers import DescribeAppResponse, Scheduler
from torchx.specs import AppDef, AppDryRunInfo, AppState, SpecsError


class _Timeless(Scheduler[str]):
    def _submit_dryrun(self, app: AppDef, cfg: dict[str, Any]) -> AppDryRunInfo[str]:
        return AppDryRunInfo("", str)

    def schedule(self, dryrun_info: AppDryRunInfo[str]) -> str:
        return "app"

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        return DescribeAppResponse(app_id=app_id, state=AppState.RUNNING)

    def _cancel_existing(self, app_id: str) -> None:
        pass


def test_a_scheduler_without_times_refuses_naming_itself() -> None:
    def factory(session_name: str, **params: Any) -> Scheduler[Any]:
        return _Timeless("timeless", session_name)

    runner = Runner("s", {"timeless": factory})
    with pytest.raises(SpecsError) as e:
        runner.log_lines_timed("timeless://s/app", "role")
    assert "the timeless scheduler keeps no time for each log line" in str(e.value)
